"""The mutation audit: every difference between the start tree and the tree read back, and whether it was allowed.

Pre is the tree both arms started from, post is the workspace read back after the agent. Each difference is
classified as added, removed, content-changed, mode-changed (file <-> executable), symlink-retargeted or
type-swapped; a compiled ``.pyc`` rewritten without its source is one more, always a violation (:mod:`.bytecode`).
A difference outside ``allowed_output_paths`` forces reward 0, whoever caused it: the seed's lesson is that an
allowlist must describe what the toolchain writes (a lockfile, a build directory), not only what the task intends.

Equal subtree digests are skipped without reading them, and an added or removed directory is one mutation
carrying the subtree's digest (its contents are named by that digest), so a 20,000-file build directory costs
one entry. The one exception is a directory above an allowed path, which is opened so its contents are judged
one by one. The receipt is a pure function of its inputs, so the stage re-derives it bit for bit.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Sequence
from typing import Literal

from ..builder import Ports, StageContext, StageKind, TreeReads, stage
from ..contracts import ContractModel, Digest, Document, PortablePath, Ref, TreeDigest
from ..sandbox.bytecode import stale_bytecode
from ..store import EntryKind, Store, TreeEntry, read_tree

__all__ = [
    "AuditInputs",
    "AuditOutputs",
    "AuditParams",
    "AuditReceipt",
    "Mutation",
    "MutationKind",
    "audit",
    "audit_trees",
    "is_allowed",
]


class MutationKind(enum.StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CONTENT_CHANGED = "content-changed"
    MODE_CHANGED = "mode-changed"
    SYMLINK_RETARGETED = "symlink-retargeted"
    TYPE_SWAPPED = "type-swapped"
    # a compiled .pyc rewritten while its source was not: it would stand in for the source (:mod:`.bytecode`)
    BYTECODE_ONLY = "bytecode-only"


class Mutation(ContractModel):
    path: PortablePath
    kind: MutationKind
    allowed: bool
    before: Digest | None  # the entry's digest in the start tree (blob, symlink target or subtree)
    after: Digest | None


class AuditReceipt(Document):
    kind: Literal["mutation-audit"] = "mutation-audit"
    schema_version: Literal[1] = 1
    start: TreeDigest
    final: TreeDigest
    allowed_output_paths: tuple[PortablePath, ...]
    mutations: tuple[Mutation, ...]
    violations: int
    reward_forced_zero: bool


class AuditParams(ContractModel):
    allowed_output_paths: tuple[PortablePath, ...]


def is_allowed(path: str, allowed: Sequence[str]) -> bool:
    """True when ``path`` is an allowed path or lies beneath one."""
    return any(path == root or path.startswith(root + "/") for root in allowed)


def _above_allowed(path: str, allowed: Sequence[str]) -> bool:
    return any(root.startswith(path + "/") for root in allowed)


class _Audit:
    def __init__(self, store: Store, allowed: Sequence[str]) -> None:
        self.store = store
        self.allowed = allowed
        self.written: list[tuple[str, EntryKind, Digest | None]] = []  # every path added or changed, as it is after

    def _entries(self, digest: Digest | None) -> dict[str, TreeEntry]:
        return {} if digest is None else {entry.name: entry for entry in read_tree(self.store, digest).entries}

    def _one(self, path: str, kind: MutationKind, before: TreeEntry | None, after: TreeEntry | None) -> Mutation:
        if after is not None:
            self.written.append((path, after.kind, after.digest))
        allowed = is_allowed(path, self.allowed)
        if not allowed and kind in (MutationKind.ADDED, MutationKind.REMOVED):
            # Creating or deleting the directory that holds an allowed path is part of writing that path.
            entry = after or before
            allowed = entry is not None and entry.kind is EntryKind.DIRECTORY and _above_allowed(path, self.allowed)
        return Mutation(
            path=PortablePath(path),
            kind=kind,
            allowed=allowed,
            before=before.digest if before else None,
            after=after.digest if after else None,
        )

    def directory(self, prefix: str, before: Digest | None, after: Digest | None) -> Iterator[Mutation]:
        old, new = self._entries(before), self._entries(after)
        for name in sorted(old.keys() | new.keys()):
            yield from self.entry(prefix + name, old.get(name), new.get(name))

    def entry(self, path: str, old: TreeEntry | None, new: TreeEntry | None) -> Iterator[Mutation]:
        if old is not None and new is not None and old.kind is new.kind and old.digest == new.digest:
            return
        if old is None or new is None:
            yield from self._one_sided(path, old, new)
        elif old.kind is new.kind is EntryKind.DIRECTORY:
            yield from self.directory(path + "/", old.digest, new.digest)
        elif old.kind is new.kind is EntryKind.SYMLINK:
            yield self._one(path, MutationKind.SYMLINK_RETARGETED, old, new)
        elif {old.kind, new.kind} <= {EntryKind.FILE, EntryKind.EXECUTABLE}:
            if old.kind is not new.kind:
                yield self._one(path, MutationKind.MODE_CHANGED, old, new)
            if old.digest != new.digest:
                yield self._one(path, MutationKind.CONTENT_CHANGED, old, new)
        else:
            yield self._one(path, MutationKind.TYPE_SWAPPED, old, new)
            if _above_allowed(path, self.allowed):
                before = old.digest if old.kind is EntryKind.DIRECTORY else None
                after = new.digest if new.kind is EntryKind.DIRECTORY else None
                yield from self.directory(path + "/", before, after)

    def _one_sided(self, path: str, old: TreeEntry | None, new: TreeEntry | None) -> Iterator[Mutation]:
        kind = MutationKind.ADDED if old is None else MutationKind.REMOVED
        yield self._one(path, kind, old, new)
        entry = new or old
        if entry is not None and entry.kind is EntryKind.DIRECTORY and _above_allowed(path, self.allowed):
            side = (None, entry.digest) if old is None else (entry.digest, None)
            yield from self.directory(path + "/", *side)


def audit_trees(store: Store, start: TreeDigest, final: TreeDigest, allowed: Sequence[PortablePath]) -> AuditReceipt:
    """Compare ``start`` with ``final`` under ``allowed``; the receipt says whether reward is forced to 0."""
    roots = tuple(sorted(set(allowed)))
    audit = _Audit(store, roots)
    found = list(audit.directory("", start, final))
    found += [
        Mutation(path=path, kind=MutationKind.BYTECODE_ONLY, allowed=False, before=None, after=None)
        for path in stale_bytecode(
            store, audit.written, [m.path for m in found if m.kind is MutationKind.CONTENT_CHANGED]
        )
    ]
    mutations = tuple(found)
    violations = sum(1 for mutation in mutations if not mutation.allowed)
    return AuditReceipt(
        start=start,
        final=final,
        allowed_output_paths=roots,
        mutations=mutations,
        violations=violations,
        reward_forced_zero=violations > 0,
    )


class AuditInputs(Ports):
    start: TreeDigest
    final: TreeDigest


class AuditOutputs(Ports):
    audit: Ref[AuditReceipt]


@stage("audit", version=3, kind=StageKind.DETERMINISTIC, trees=TreeReads.LISTINGS)
def audit(context: StageContext, inputs: AuditInputs, params: AuditParams) -> AuditOutputs:
    """The ``audit`` receipt of ``start`` against ``final``, kept in the runner-owned store."""
    receipt = audit_trees(context.store, inputs.start, inputs.final, params.allowed_output_paths)
    return AuditOutputs(audit=context.store.put_document(receipt))
