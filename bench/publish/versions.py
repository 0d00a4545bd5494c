"""Nothing is reinterpreted: a new publication goes beside the old ones, which stay whole and still verify.

``<target>`` always holds the newest bundle (its path is what readers open). When a new publication differs from
the one there (by the digest of its ``MANIFEST.json``, which covers every file), the old bundle moves whole to
``<target>.superseded/<digest>/`` and ``<target>.superseded/index.json`` lists it with the bundle that superseded
it. A superseded bundle verifies where it lies: its manifest names its files relative to itself. Republishing the
same bundle changes nothing.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from ..contracts import ContractModel, Digest, Document
from ..contracts.files import read_contract
from ..store import Store, export_tree
from .manifest import MANIFEST_NAME

__all__ = ["PublishedIndex", "SupersededBundle", "export_versioned", "superseded_directory"]


class SupersededBundle(ContractModel):
    manifest: Digest  # the digest of its MANIFEST.json
    directory: Annotated[str, Field(min_length=1)]  # under the superseded directory
    superseded_by: Digest  # the manifest digest of the bundle that replaced it
    at: Annotated[str, Field(min_length=1)]  # when it was replaced (UTC, ISO 8601)


class PublishedIndex(Document):
    kind: Literal["published-index"] = "published-index"
    schema_version: Literal[1] = 1
    current: Digest  # the manifest digest of the bundle at the target
    superseded: tuple[SupersededBundle, ...]  # oldest first


def superseded_directory(target: Path) -> Path:
    return target.with_name(target.name + ".superseded")


def _manifest_digest(bundle: Path) -> Digest | None:
    path = bundle / MANIFEST_NAME
    return Digest.of(path.read_bytes()) if path.is_file() else None


def _index(target: Path) -> tuple[SupersededBundle, ...]:
    path = superseded_directory(target) / "index.json"
    if not path.is_file():
        return ()
    return read_contract(path, PublishedIndex, "the published index").superseded


def export_versioned(store: Store, tree: Digest, target: Path) -> Path:
    """Put the published ``tree`` at ``target``; a different bundle already there moves beside it, listed."""
    staging = target.with_name(target.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    export_tree(store, tree, staging)
    new = _manifest_digest(staging)
    assert new is not None  # the publish stage always writes the manifest
    old = _manifest_digest(target) if target.is_dir() else None
    superseded = list(_index(target))
    if old is not None and old != new:
        directory = superseded_directory(target)
        directory.mkdir(exist_ok=True)
        kept = directory / old.hex[:16]
        if kept.exists():  # the same bundle was superseded before and republished since: one copy is enough
            shutil.rmtree(target)
        else:
            target.rename(kept)
            at = datetime.now(UTC).isoformat(timespec="seconds")
            superseded.append(SupersededBundle(manifest=old, directory=kept.name, superseded_by=new, at=at))
    shutil.rmtree(target, ignore_errors=True)  # the same bundle (or no bundle) was there: nothing is lost
    staging.rename(target)
    if superseded:
        index = PublishedIndex(current=new, superseded=tuple(superseded))
        text = json.dumps(index.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
        (superseded_directory(target) / "index.json").write_text(text, encoding="utf-8")
    return target


# What `stele-bench schema` exports (listed in bench.run.catalogue).
PUBLIC_CONTRACTS: tuple[type[ContractModel], ...] = (PublishedIndex,)
