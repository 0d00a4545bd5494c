"""The ``tree-summary`` stage: counts of a tree's entries by kind and extension, derived from the tree alone."""

from __future__ import annotations

from collections import Counter
from pathlib import PurePosixPath
from typing import Literal

from ..builder.context import StageContext
from ..builder.stage import NoParams, Ports, StageKind, stage
from ..contracts import Document, Ref, TreeDigest
from ..store import EntryKind, walk_tree

__all__ = ["PUBLIC_CONTRACTS", "SummaryInputs", "SummaryOutputs", "TreeSummary", "tree_summary"]


class TreeSummary(Document):
    kind: Literal["tree-summary"] = "tree-summary"
    schema_version: Literal[1] = 1
    tree: TreeDigest
    files: int
    executables: int
    symlinks: int
    directories: int
    total_bytes: int
    extensions: dict[str, int]


class SummaryInputs(Ports):
    tree: TreeDigest


class SummaryOutputs(Ports):
    summary: Ref[TreeSummary]


@stage("tree-summary", version=2, kind=StageKind.DETERMINISTIC)
def tree_summary(context: StageContext, inputs: SummaryInputs, params: NoParams) -> SummaryOutputs:
    store = context.store
    kinds: Counter[EntryKind] = Counter()
    extensions: Counter[str] = Counter()
    total = 0
    for path, entry in walk_tree(store, inputs.tree):
        kinds[entry.kind] += 1
        if entry.kind in (EntryKind.FILE, EntryKind.EXECUTABLE):
            total += entry.size
            extensions[PurePosixPath(path).suffix or "(none)"] += 1
    summary = TreeSummary(
        tree=inputs.tree,
        files=kinds[EntryKind.FILE] + kinds[EntryKind.EXECUTABLE],
        executables=kinds[EntryKind.EXECUTABLE],
        symlinks=kinds[EntryKind.SYMLINK],
        directories=kinds[EntryKind.DIRECTORY],
        total_bytes=total,
        extensions=dict(sorted(extensions.items())),
    )
    return SummaryOutputs(summary=context.store.put_document(summary))


PUBLIC_CONTRACTS = (TreeSummary,)
