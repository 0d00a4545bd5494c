"""Verification of a published bundle: re-hash every file, re-derive every receipt from its recorded inputs.

Each receipt is re-derived from the inputs the manifest records for it (as they are on disk), so a difference
is attributed to the receipt itself; an altered input shows up separately as a re-hash difference, with the
receipts it feeds. Every difference carries its lineage down to the recorded files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..contracts import Digest, PortablePath
from ..errors import BenchError
from .bundle import bundle_files, check_layout, iter_bundle_files
from .manifest import PublicationManifest, read_manifest
from .receipts import derive

__all__ = ["Difference", "receipt_lineage", "rehash", "verify"]


@dataclass(frozen=True)
class Difference:
    """A file whose recorded digest is not what re-hashing or re-deriving gives (None: absent or unknown)."""

    path: str
    recorded: Digest | None
    actual: Digest | None
    how: str  # "re-hashed" or "re-derived"
    lineage: tuple[str, ...]

    def __str__(self) -> str:
        recorded = self.recorded or "(not in the manifest)"
        actual = self.actual or "(missing)"
        head = f"{self.path}: recorded {recorded}, {self.how} {actual}"
        return "\n".join([head, *(f"  {line}" for line in self.lineage)])


def receipt_lineage(manifest: PublicationManifest, path: str, indent: str = "") -> list[str]:
    """How ``path`` came to be: its stage and parameters, then each recorded input with its digest, recursively."""
    receipt = manifest.receipt_for(path)
    if receipt is None:
        return []
    params = ", ".join(f"{k}={v}" for k, v in sorted(receipt.params.items()))
    lines = [f"{indent}<- {receipt.stage.value} v{receipt.version}" + (f" ({params})" if params else "")]
    for source in receipt.inputs:
        lines.append(f"{indent}   <- {source} {manifest.digest_of(source)}")
        lines.extend(receipt_lineage(manifest, source, indent + "      "))
    return lines


def _consumers(manifest: PublicationManifest, path: str) -> tuple[str, ...]:
    return tuple(f"feeds {r.path} ({r.stage.value})" for r in manifest.receipts if path in r.inputs)


def rehash(manifest: PublicationManifest, root: Path) -> list[Difference]:
    """The hashing pass: every file of the bundle at ``root`` re-hashed against ``manifest``."""
    actual = {path: Digest.of(data) for path, data in iter_bundle_files(root)}
    differences = []
    for entry in manifest.files:
        found = actual.get(entry.path)
        if found != entry.digest:
            differences.append(
                Difference(entry.path, entry.digest, found, "re-hashed", _consumers(manifest, entry.path))
            )
    listed = {entry.path for entry in manifest.files}
    for path in sorted(set(actual) - listed):
        differences.append(Difference(path, None, actual[path], "re-hashed", ("not covered by the manifest",)))
    return differences


def _rederive(manifest: PublicationManifest, files: Mapping[PortablePath, bytes]) -> list[Difference]:
    differences = []
    for receipt in manifest.receipts:
        recorded = manifest.digest_of(receipt.path)
        try:
            actual: Digest | None = Digest.of(derive(receipt, files))
            failure: tuple[str, ...] = ()
        except BenchError as exc:
            actual, failure = None, (f"could not re-derive: {exc}",)
        if actual != recorded:
            trail = (*failure, *receipt_lineage(manifest, receipt.path))
            differences.append(Difference(receipt.path, recorded, actual, "re-derived", trail))
    return differences


def verify(manifest_path: Path) -> list[Difference]:
    """Every difference between the manifest and the bundle beside it; empty means verified."""
    manifest = read_manifest(manifest_path)
    check_layout([entry.path for entry in manifest.files], str(manifest_path))
    return rehash(manifest, manifest_path.parent) + _rederive(manifest, bundle_files(manifest_path.parent))
