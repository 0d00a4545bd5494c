"""Writes buffered by a transaction on a backend that cannot commit several keys at once (a remote object store).

A transaction keeps its writes here, per thread: objects, ref changes, action results and deletions. Reads of
the writing thread look here first (it sees its own writes); other threads see only what is flushed. A nested
transaction has its own layer: it is merged into its parent when it ends, dropped when it raises. The outermost
layer is handed to the backend's flush when it ends.

A compare-and-set inside a transaction is decided when it is called, against what the thread sees, and its
condition (the ETag it read, or "absent") travels with the change: the flush applies it as a conditional write,
so a ref another writer moved meanwhile is never overwritten.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from ...contracts import Digest
from .base import RecordedResult

__all__ = ["ABSENT", "Buffer", "RefChange", "ThreadStacks", "Transactions"]

S = TypeVar("S")

ABSENT = "*"  # the condition of a change that may only create its ref


@dataclass(frozen=True, slots=True)
class RefChange:
    new: Digest | None  # None: delete the ref
    expect: str | None  # None: unconditional; ABSENT: only if there is none; else the ETag it must still have


@dataclass
class Buffer:
    """One transaction's writes, in the order the flush applies them."""

    objects: dict[Digest, tuple[bytes, bool, float]] = field(default_factory=dict)  # data, is_document, created
    results: list[tuple[RecordedResult, Digest | None]] = field(default_factory=list)  # with what each replaces
    refs: dict[str, RefChange] = field(default_factory=dict)
    deleted: set[Digest] = field(default_factory=set)

    def put(self, digest: Digest, data: bytes, document: bool, created: float) -> None:
        self.deleted.discard(digest)
        self.objects.setdefault(digest, (data, document, created))

    def delete(self, digests: set[Digest]) -> None:
        for digest in digests:
            self.objects.pop(digest, None)
        self.results = [(entry, old) for entry, old in self.results if entry.result not in digests]
        self.deleted |= digests

    def change_ref(self, name: str, change: RefChange) -> None:
        """Record ``change``; an earlier condition on the same ref stays, so no later write loosens it."""
        earlier = self.refs.get(name)
        self.refs[name] = change if earlier is None else RefChange(change.new, earlier.expect)

    def merged_into(self, parent: Buffer) -> Buffer:
        """``parent`` with this nested transaction's writes on top."""
        for digest, (data, document, created) in self.objects.items():
            parent.put(digest, data, document, created)
        parent.delete(self.deleted)
        parent.results.extend(self.results)
        for name, change in self.refs.items():
            parent.change_ref(name, change)
        return parent


class ThreadStacks(Generic[S]):
    """A stack per thread: each thread's open transactions, innermost last."""

    def __init__(self) -> None:
        self._local = threading.local()

    def __call__(self) -> list[S]:
        stack: list[S] | None = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    @contextmanager
    def layer(self, opened: S, merge: Callable[[S, S], S], commit: Callable[[S], object]) -> Iterator[None]:
        """Push ``opened`` for the block. When the block ends, a nested layer becomes ``merge(done, parent)`` in
        its parent's place and the outermost one is committed; when it raises, the layer is dropped."""
        stack = self()
        stack.append(opened)
        try:
            yield
        except BaseException:
            stack.pop()
            raise
        done = stack.pop()
        if stack:
            stack[-1] = merge(done, stack[-1])
        else:
            commit(done)


class Transactions:
    """Each thread's stack of open transactions over one backend; ``flush`` applies an outermost buffer."""

    def __init__(self, flush: Callable[[Buffer], None]) -> None:
        self._flush = flush
        self._stack = ThreadStacks[Buffer]()

    def transaction(self) -> AbstractContextManager[None]:
        return self._stack.layer(Buffer(), Buffer.merged_into, self._flush)

    def current(self) -> Buffer | None:
        """The innermost open transaction of this thread, where its writes go; None outside one."""
        stack = self._stack()
        return stack[-1] if stack else None

    def layers(self) -> list[Buffer]:
        """This thread's open transactions, innermost first: the order its reads consult them."""
        return list(reversed(self._stack()))

    def find_object(self, digest: Digest) -> tuple[bytes, bool, float] | Literal[False] | None:
        """The pending object, False if a pending delete hides it, or None when no layer mentions it."""
        for layer in self.layers():
            if digest in layer.objects:
                return layer.objects[digest]
            if digest in layer.deleted:
                return False
        return None

    def find_ref(self, name: str) -> RefChange | None:
        for layer in self.layers():
            if name in layer.refs:
                return layer.refs[name]
        return None

    def pending_results(self) -> list[RecordedResult]:
        """Results recorded by this thread's open transactions, oldest first."""
        return [entry for layer in reversed(self.layers()) for entry, _ in layer.results]

    def hidden(self) -> set[Digest]:
        """Objects this thread's open transactions delete."""
        return {digest for layer in self.layers() for digest in layer.deleted}
