"""The smallest real plan: a directory hashed into a tree, and a summary derived from that tree."""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Literal

from ..contracts import ContractModel, Digest, Document, Sha256
from ..store import EntryKind, Store, tree_from_directory, walk_tree
from .stage import StageKind, stage

__all__ = ["DirectoryParams", "TreeSummary", "directory_fingerprint", "directory_tree", "tree_summary"]


class DirectoryParams(ContractModel):
    """``directory`` as given (relative to where the plan runs); ``fingerprint`` from its stat data."""

    directory: str
    fingerprint: Sha256


class NoParams(ContractModel):
    pass


class TreeSummary(Document):
    kind: Literal["tree-summary"] = "tree-summary"
    schema_version: Literal[1] = 1
    tree: Digest
    files: int
    executables: int
    symlinks: int
    directories: int
    total_bytes: int
    extensions: dict[str, int]


def directory_fingerprint(directory: Path) -> Sha256:
    """A cheap observation of a directory: names, modes, sizes and mtimes, as Make would look at it.

    Reading a stat is enough to tell that nothing changed; when something did, the stage re-hashes the bytes.
    """
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(files) + dirs:
            path = os.path.join(root, name)
            info = os.lstat(path)
            relative = os.path.relpath(path, directory)
            digest.update(f"{relative}\0{info.st_mode}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return Sha256(digest.hexdigest())


@stage("directory-tree", version=1, kind=StageKind.OBSERVED, params=DirectoryParams)
def directory_tree(store: Store, inputs: Mapping[str, Digest], params: DirectoryParams) -> dict[str, Digest]:
    return {"tree": tree_from_directory(store, Path(params.directory))}


@stage("tree-summary", version=1, kind=StageKind.DETERMINISTIC, params=NoParams)
def tree_summary(store: Store, inputs: Mapping[str, Digest], params: NoParams) -> dict[str, Digest]:
    tree = inputs["tree"]
    kinds: Counter[EntryKind] = Counter()
    extensions: Counter[str] = Counter()
    total = 0
    for path, entry in walk_tree(store, tree):
        kinds[entry.kind] += 1
        if entry.kind in (EntryKind.FILE, EntryKind.EXECUTABLE):
            total += entry.size
            extensions[PurePosixPath(path).suffix or "(none)"] += 1
    summary = TreeSummary(
        tree=tree,
        files=kinds[EntryKind.FILE] + kinds[EntryKind.EXECUTABLE],
        executables=kinds[EntryKind.EXECUTABLE],
        symlinks=kinds[EntryKind.SYMLINK],
        directories=kinds[EntryKind.DIRECTORY],
        total_bytes=total,
        extensions=dict(sorted(extensions.items())),
    )
    return {"summary": store.put_document(summary)}


PUBLIC_CONTRACTS = (TreeSummary,)
