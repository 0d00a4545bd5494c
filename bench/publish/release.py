"""Publishing a bundle: derive its receipts, run the publication checks, write the manifest.

The manifest is written last and only when every check passes, so a bundle with a ``MANIFEST.json`` is one
that passed; ``check_bundle`` re-runs the same checks (plus coverage) on a published bundle, as CI does.
"""

from __future__ import annotations

from pathlib import Path

from ..contracts import Digest, canonical_bytes
from .bundle import REPORT_PATH, SUMMARY_PATH, bundle_files, check_layout
from .checks import Check, PublicationFinding, PublicationRefused, all_findings, check_coverage
from .manifest import MANIFEST_NAME, PublicationManifest, PublishedFile, read_manifest, write_manifest
from .receipts import derive, plan_receipts

__all__ = ["check_bundle", "publish"]


def publish(root: Path, confidence: str = "0.95") -> PublicationManifest:
    """Derive the summary and report from the bundle's records and admissions, check, then write the manifest."""
    files = {p: data for p, data in bundle_files(root).items() if p not in (SUMMARY_PATH, REPORT_PATH)}
    check_layout(files, str(root))  # before anything is written: an empty or foreign directory stays as it was
    early = all_findings(files, None)
    if early:
        raise PublicationRefused(early)
    receipts = plan_receipts(files, confidence)
    for receipt in receipts:
        data = derive(receipt, files)
        target = root / receipt.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        files[receipt.path] = data
    manifest = PublicationManifest(
        files=[PublishedFile(path=p, digest=Digest.of(files[p])) for p in sorted(files)],
        receipts=receipts,
    )
    findings = all_findings(files, canonical_bytes(manifest))
    if findings:
        raise PublicationRefused(findings)
    write_manifest(root, manifest)
    return manifest


def check_bundle(manifest_path: Path) -> list[PublicationFinding]:
    """Every publication check on a published bundle: coverage, admissions and leaks; empty when it passes."""
    if manifest_path.name != MANIFEST_NAME:
        return [PublicationFinding(manifest_path.name, Check.COVERAGE, f"is not a bundle's {MANIFEST_NAME}")]
    manifest = read_manifest(manifest_path)
    check_layout([entry.path for entry in manifest.files], str(manifest_path))
    files = bundle_files(manifest_path.parent)
    findings = check_coverage(files, manifest) + all_findings(files, manifest_path.read_bytes())
    return sorted(findings)
