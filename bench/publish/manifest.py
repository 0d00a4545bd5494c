"""The publication manifest: every published file with its digest; and the lineage document beside it.

The manifest sits at the bundle root as ``MANIFEST.json`` and is the one file it does not cover (it cannot hash
itself); everything else in the bundle must be listed, and nothing listed may be missing.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Literal

from pydantic import model_validator

from ..contracts import ContractModel, Digest, Document, PortablePath, canonical_bytes
from ..contracts.files import read_contract
from ..errors import ContractError

__all__ = [
    "LINEAGE_PATH",
    "MANIFEST_NAME",
    "PUBLIC_CONTRACTS",
    "PublicationLineage",
    "PublicationManifest",
    "PublishedAction",
    "PublishedFile",
    "read_manifest",
    "write_manifest",
]

MANIFEST_NAME = "MANIFEST.json"
LINEAGE_PATH = PortablePath("receipts/lineage.json")


class PublishedFile(ContractModel):
    path: PortablePath
    digest: Digest


class PublicationManifest(Document):
    """Every file of the bundle with its digest; how each was derived is in ``receipts/lineage.json``."""

    kind: Literal["publication-manifest"] = "publication-manifest"
    schema_version: Literal[2] = 2
    files: list[PublishedFile]

    @model_validator(mode="after")
    def _consistent(self) -> PublicationManifest:
        # Strictly increasing is sorted and unique: one pass instead of a sort (2 ms of 8,000 paths).
        if not all(a.path < b.path for a, b in pairwise(self.files)):
            raise ValueError("manifest files must be listed once each, sorted by path")
        return self

    def digest_of(self, path: str) -> Digest:
        for entry in self.files:
            if entry.path == path:
                return entry.digest
        raise ContractError(f"{path} is not listed in the manifest")


class PublishedAction(ContractModel):
    """One recorded stage run the bundle carries: its key and result documents are ``objects/`` files."""

    stage: str
    key: Digest
    result: Digest


class PublicationLineage(Document):
    """Every action below the bundle's records, admissions and report, exported from the store's action cache:
    the one derivation record ``verify`` re-runs (deterministic actions) or attests (observed ones)."""

    kind: Literal["publication-lineage"] = "publication-lineage"
    schema_version: Literal[1] = 1
    actions: list[PublishedAction]


def write_manifest(root: Path, manifest: PublicationManifest) -> Path:
    path = root / MANIFEST_NAME
    path.write_bytes(canonical_bytes(manifest))
    return path


def read_manifest(path: Path) -> PublicationManifest:
    hint = "pass the MANIFEST.json at a bundle's root"
    return read_contract(path, PublicationManifest, "the publication manifest", hint)


PUBLIC_CONTRACTS = (PublicationManifest, PublicationLineage)
