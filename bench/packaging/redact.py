"""Redaction: the only function allowed to remove anything from a packaged tree.

It removes auto-loaded agent context (:mod:`bench.packaging.patterns`) and the extra paths declared for removal
(a fixture's ``redact_paths``, ``stele-bench redact --remove``), and writes a receipt naming every removed entry
with its digest and size. A directory that the removals leave empty goes too, and is receipted: git cannot hold
an empty directory, so one left behind would only mark the place where something was taken away. It runs once
per corpus and its output is shared by every arm, so the arms cannot differ in what was taken away.
Certification, which only reads, runs on the result: there is no code path where a gate notices a problem and
quietly repairs it.

Only directory objects on the path to a removal are rewritten; blobs are never read, so redacting a large tree
costs one read per directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import Field

from ..builder import Ports
from ..contracts import ContractModel, Digest, Document, PortablePath, Ref, TreeDigest
from ..errors import ContractError
from ..store import EntryKind, Store, TreeEntry, TreeObject, read_tree, walk_tree
from .patterns import auto_loaded_match

__all__ = [
    "DECLARED_REASON",
    "EMPTIED_REASON",
    "RedactInputs",
    "RedactOutputs",
    "RedactParams",
    "RedactionReceipt",
    "RemovedEntry",
    "redact_tree",
]

DECLARED_REASON = "declared for removal"
EMPTIED_REASON = "left empty by the removals within it"


class RemovedEntry(ContractModel):
    path: PortablePath
    kind: EntryKind
    digest: Digest  # file bytes, symlink target, or directory object
    size: int
    reason: str  # the matching pattern, DECLARED_REASON or EMPTIED_REASON


class RedactionReceipt(Document):
    kind: Literal["redaction-receipt"] = "redaction-receipt"
    schema_version: Literal[1] = 1
    source: TreeDigest
    redacted: TreeDigest
    removed: tuple[RemovedEntry, ...]


class RedactParams(ContractModel):
    """``extra_paths``: paths declared for removal (a fixture's, or given by hand), removed and receipted like any
    match."""

    # Not strict: a plan file spells the tuple as a JSON list.
    extra_paths: Annotated[tuple[PortablePath, ...], Field(strict=False)] = ()


@dataclass
class _Redaction:
    pending: set[str]
    removed: list[RemovedEntry] = field(default_factory=list)


def redact_tree(store: Store, tree: TreeDigest, extra_paths: tuple[PortablePath, ...] = ()) -> RedactionReceipt:
    """Store ``tree`` without auto-loaded context and ``extra_paths``; a declared path that is absent is an error."""
    work = _Redaction(pending=set(extra_paths))
    with store.batch():
        redacted, _ = _rewrite(store, tree, "", work) or (store.put_document(TreeObject(entries=())), 0)
        if work.pending:
            raise ContractError(
                f"tree {tree} has no {', '.join(sorted(work.pending))}, declared for removal (by a fixture's "
                "redact_paths or --remove); a declared removal that matches nothing is a typo",
                field="extra_paths",
                hint="fix the path where it was declared",
            )
    return RedactionReceipt(source=tree, redacted=TreeDigest(redacted), removed=tuple(work.removed))


def _rewrite(
    store: Store, digest: Digest, prefix: str, work: _Redaction, tree: TreeObject | None = None
) -> tuple[Digest, int] | None:
    """The directory ``digest`` (whose object is ``tree`` when already read) with removals applied, and its new
    total size; None when they emptied it. Its subdirectories are read in one batch, not one query each."""
    tree = tree or read_tree(store, digest)
    subdirectories = list(dict.fromkeys(entry.digest for entry in tree.entries if entry.kind is EntryKind.DIRECTORY))
    below = dict(zip(subdirectories, store.get_documents(subdirectories, TreeObject), strict=True))
    kept: list[TreeEntry] = []
    changed = False
    for entry in tree.entries:
        path = prefix + entry.name
        reason = auto_loaded_match(path) or (DECLARED_REASON if path in work.pending else None)
        if reason is not None:
            _remove(store, PortablePath(path), entry, reason, work)
            changed = True
            continue
        if entry.kind is EntryKind.DIRECTORY:
            rewritten = _rewrite(store, entry.digest, path + "/", work, below[entry.digest])
            if rewritten is None:
                work.removed.append(_removed(PortablePath(path), entry, EMPTIED_REASON))
                changed = True
                continue
            if rewritten[0] != entry.digest:
                entry = entry.model_copy(update={"digest": rewritten[0], "size": rewritten[1]})
                changed = True
        kept.append(entry)
    total = sum(entry.size for entry in kept if entry.kind is not EntryKind.SYMLINK)
    if not changed:
        return digest, total
    if not kept:
        return None
    return store.put_document(TreeObject(entries=tuple(kept))), total


def _removed(path: PortablePath, entry: TreeEntry, reason: str) -> RemovedEntry:
    return RemovedEntry(path=path, kind=entry.kind, digest=entry.digest, size=entry.size, reason=reason)


def _remove(store: Store, path: PortablePath, entry: TreeEntry, reason: str, work: _Redaction) -> None:
    work.removed.append(_removed(path, entry, reason))
    work.pending = {p for p in work.pending if p != path and not p.startswith(path + "/")}
    if entry.kind is EntryKind.DIRECTORY:
        for inner, below in walk_tree(store, entry.digest, path + "/"):
            work.removed.append(_removed(inner, below, reason))


class RedactInputs(Ports):
    tree: TreeDigest


class RedactOutputs(Ports):
    tree: TreeDigest
    receipt: Ref[RedactionReceipt]
