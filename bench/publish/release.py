"""Sealing a bundle: run the publication checks, write the manifest and the provenance statement; and signing it.

The manifest is written last and only when every check passes, so a bundle with a ``MANIFEST.json`` is one
that passed; ``check_bundle`` re-runs the same checks (plus coverage) on a published bundle, as CI does. What
the bundle holds was laid out before (the ``bundle`` stage, or ``bench.stages.publish.publish_directory``): sealing
derives nothing. Signing (:func:`sign`) is separate, and happens where the publisher's key is: never inside a stage,
so a private key never enters the store.
"""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..contracts import Digest, canonical_bytes
from ..errors import ContractError
from ..leaks import Check, FileFinding, check_leaks
from .bundle_layout import PROVENANCE_NAME, bundle_files, check_layout
from .checks import PublicationRefused, all_findings, check_coverage
from .manifest import MANIFEST_NAME, PublicationManifest, PublishedFile, read_manifest, write_manifest
from .provenance import statement_bytes
from .signing import SIGNATURE_NAME, key_id, sign_statement

__all__ = ["check_bundle", "seal", "sign"]


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


def sign(root: Path, key: Ed25519PrivateKey) -> str:
    """Sign the sealed bundle at ``root``: its statement, rebuilt from its files (a bundle changed since it was sealed
    is refused), in a DSSE envelope beside it; returns the key id."""
    statement = statement_bytes(bundle_files(root))
    path = root / PROVENANCE_NAME
    if not path.is_file() or path.read_bytes() != statement:
        raise ContractError(
            f"{path} is not the statement of the files beside it: the bundle changed since it was sealed",
            path=str(path),
            hint="publish it again, then sign",
        )
    (root / SIGNATURE_NAME).write_bytes(sign_statement(statement, key))
    return key_id(key.public_key())


def check_bundle(manifest_path: Path) -> list[FileFinding]:
    """Every publication check on a published bundle: coverage, admissions and leaks; empty when it passes."""
    if manifest_path.name != MANIFEST_NAME:
        return [FileFinding(manifest_path.name, Check.COVERAGE, f"is not a bundle's {MANIFEST_NAME}")]
    manifest = read_manifest(manifest_path)
    check_layout([entry.path for entry in manifest.files], str(manifest_path))
    files = bundle_files(manifest_path.parent)
    findings = check_coverage(files, manifest) + all_findings(files, manifest_path.read_bytes())
    return sorted(findings)
