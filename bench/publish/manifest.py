"""The publication manifest: every published file with its digest, and how each receipt was derived.

The manifest sits at the bundle root as ``MANIFEST.json`` and is the one file it does not cover (it cannot hash
itself); everything else in the bundle must be listed, and nothing listed may be missing.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..contracts import ContractModel, Digest, Document, PortablePath, canonical_bytes
from ..contracts.files import read_contract
from ..errors import ContractError

__all__ = [
    "MANIFEST_NAME",
    "PUBLIC_CONTRACTS",
    "PublicationManifest",
    "PublishedFile",
    "Receipt",
    "ReceiptStage",
    "read_manifest",
    "write_manifest",
]

MANIFEST_NAME = "MANIFEST.json"


class ReceiptStage(StrEnum):
    """The deterministic stages whose outputs ``verify`` re-derives."""

    ANALYZE = "analyze"
    REPORT = "report"


class PublishedFile(ContractModel):
    path: PortablePath
    digest: Digest


class Receipt(ContractModel):
    """A published file that a deterministic stage derived from other published files."""

    path: PortablePath
    stage: ReceiptStage
    version: Annotated[int, Field(ge=1)]
    params: dict[str, str]
    inputs: list[PortablePath]


class PublicationManifest(Document):
    kind: Literal["publication-manifest"] = "publication-manifest"
    schema_version: Literal[1] = 1
    files: list[PublishedFile]
    receipts: list[Receipt]

    @model_validator(mode="after")
    def _consistent(self) -> PublicationManifest:
        paths = [f.path for f in self.files]
        if paths != sorted(set(paths)):
            raise ValueError("manifest files must be listed once each, sorted by path")
        listed = set(paths)
        for receipt in self.receipts:
            unknown = [p for p in [receipt.path, *receipt.inputs] if p not in listed]
            if unknown:
                raise ValueError(f"receipt {receipt.path} names unlisted file(s) {unknown}; list every file")
        return self

    def digest_of(self, path: str) -> Digest:
        for entry in self.files:
            if entry.path == path:
                return entry.digest
        raise ContractError(f"{path} is not listed in the manifest")

    def receipt_for(self, path: str) -> Receipt | None:
        return next((r for r in self.receipts if r.path == path), None)


def write_manifest(root: Path, manifest: PublicationManifest) -> Path:
    path = root / MANIFEST_NAME
    path.write_bytes(canonical_bytes(manifest))
    return path


def read_manifest(path: Path) -> PublicationManifest:
    hint = "pass the MANIFEST.json at a bundle's root"
    return read_contract(path, PublicationManifest, "the publication manifest", hint)


PUBLIC_CONTRACTS = (PublicationManifest,)
