"""Refs that keep every value they had: what the plan publishes is never reinterpreted in place.

A plan ref (``published/<suite>``) names the current value; every value it has named is kept under
``<ref>/v<N>`` (N from 1, in the order set), so gc keeps each and a re-grade (a grading-code change re-runs grade
and everything after it) publishes a new version beside the old one, which stays and still verifies: a bundle
carries its own lineage and code digests. :func:`version_index` lists them, the superseded ones marked.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from ..contracts import ContractModel, Digest, Document
from .store import Store

__all__ = ["PUBLIC_CONTRACTS", "RefVersion", "VersionIndex", "set_versioned_ref", "version_index", "versions"]

_VERSION = re.compile(r"v([1-9][0-9]*)")


def versions(store: Store, ref: str) -> list[tuple[int, Digest]]:
    """Every value ``ref`` has named, by version number, oldest first."""
    found = []
    for name, digest in store.refs().items():
        head, _, tail = name.rpartition("/")
        matched = _VERSION.fullmatch(tail)
        if head == ref and matched:
            found.append((int(matched.group(1)), digest))
    return sorted(found)


def set_versioned_ref(store: Store, ref: str, digest: Digest) -> int:
    """Point ``ref`` at ``digest``, keeping it as a version (a value it named before keeps its number)."""
    known = versions(store, ref)
    number = next((n for n, value in known if value == digest), None)
    if number is None:
        number = known[-1][0] + 1 if known else 1
        store.set_ref(f"{ref}/v{number}", digest)
    store.set_ref(ref, digest)
    return number


class RefVersion(ContractModel):
    version: int = Field(ge=1)
    digest: Digest
    superseded: bool  # the ref names another version now


class VersionIndex(Document):
    """Every version of a ref: the published index a reader checks for superseded bundles."""

    kind: Literal["version-index"] = "version-index"
    schema_version: Literal[1] = 1
    ref: str
    current: Digest | None
    versions: list[RefVersion]


def version_index(store: Store, ref: str) -> VersionIndex:
    current = store.get_ref(ref)
    listed = [RefVersion(version=n, digest=d, superseded=d != current) for n, d in versions(store, ref)]
    return VersionIndex(ref=ref, current=current, versions=listed)


PUBLIC_CONTRACTS = (VersionIndex,)
