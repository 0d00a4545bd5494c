"""Sealing a bundle: run the publication checks, write the manifest and the provenance statement.

The manifest is written last and only when every check passes, so a bundle with a ``MANIFEST.json`` is one
that passed; ``check_bundle`` re-runs the same checks (plus coverage) on a published bundle, as CI does. What
the bundle holds was laid out before (the ``bundle`` stage, or ``bench.run.publish.publish_directory``): sealing
derives nothing.
"""

from __future__ import annotations

from pathlib import Path

from ..contracts import Digest, canonical_bytes
from .bundle import PROVENANCE_NAME, bundle_files, check_layout
from .checks import Check, PublicationFinding, PublicationRefused, all_findings, check_coverage, check_leaks
from .manifest import MANIFEST_NAME, PublicationManifest, PublishedFile, read_manifest, write_manifest
from .provenance import statement_bytes

__all__ = ["check_bundle", "seal"]


def seal(root: Path) -> PublicationManifest:
    """Check every file of the bundle at ``root``, then write its manifest and its in-toto statement."""
    files = bundle_files(root)
    check_layout(files, str(root))  # before anything is written: an empty or foreign directory stays as it was
    manifest = PublicationManifest(files=[PublishedFile(path=p, digest=Digest.of(files[p])) for p in sorted(files)])
    provenance = statement_bytes(files)
    findings = all_findings(files, canonical_bytes(manifest)) + check_leaks(PROVENANCE_NAME, provenance)
    if findings:
        raise PublicationRefused(sorted(findings))
    (root / PROVENANCE_NAME).write_bytes(provenance)
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
