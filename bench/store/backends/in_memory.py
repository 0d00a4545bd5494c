"""A store held in memory: for tests, and for work whose objects need not outlive the process.

Thread-safe with the same visibility as SQLite in WAL mode: one writing transaction at a time, readers never
wait for it and never see its writes before it ends. A transaction works on its own copy of the state and
publishes it at the end (a nested one copies its parent's), so a transaction costs a copy of the containers:
O(number of objects), fine for what a process holds in memory.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ...contracts import Digest
from .base import ObjectInfo, RecordedResult, StoreBackend
from .pending import ThreadStacks

__all__ = ["MemoryBackend"]

_NAMES = itertools.count(1)


@dataclass
class _State:
    """Everything the backend holds. Values are immutable, so copying the containers is a snapshot."""

    objects: dict[Digest, tuple[ObjectInfo, bytes]] = field(default_factory=dict)
    refs: dict[str, Digest] = field(default_factory=dict)
    log: list[RecordedResult] = field(default_factory=list)  # in the order recorded
    by_key: dict[Digest, tuple[RecordedResult, ...]] = field(default_factory=dict)
    by_output: dict[Digest, tuple[Digest, ...]] = field(default_factory=dict)
    claims: dict[Digest, bytes] = field(default_factory=dict)

    def copy(self) -> _State:
        return _State(
            dict(self.objects),
            dict(self.refs),
            list(self.log),
            dict(self.by_key),
            dict(self.by_output),
            dict(self.claims),
        )

    def record(self, entry: RecordedResult) -> None:
        self.log.append(entry)
        self.by_key[entry.key] = (*self.by_key.get(entry.key, ()), entry)
        for output in entry.outputs:
            self.by_output[output] = (*self.by_output.get(output, ()), entry.result)

    def forget(self, results: Collection[Digest]) -> None:
        """Drop the entries of ``results`` (their objects are deleted) and rebuild the indexes."""
        kept = [entry for entry in self.log if entry.result not in results]
        self.log, self.by_key, self.by_output = [], {}, {}
        for entry in kept:
            self.record(entry)


class MemoryBackend(StoreBackend):
    """Objects, refs and action results in dicts, gone with the process."""

    def __init__(self) -> None:
        self._location = f"memory:{next(_NAMES)}"  # unique in the process, so a cache keyed on it never aliases
        self._committed = _State()
        self._mutex = threading.Lock()  # held for one read or write of the committed state, never longer
        self._writer = threading.RLock()  # held by the one writing transaction, as SQLite's BEGIN IMMEDIATE
        self._stack = ThreadStacks[_State]()  # this thread's open transactions, innermost last

    def __repr__(self) -> str:
        return f"MemoryBackend({self._location!r})"

    @property
    def location(self) -> str:
        return self._location

    def corrupt(self, digest: Digest, data: bytes) -> None:
        """Test hook: keep other bytes under ``digest``, as a flipped bit on a disk would."""
        with self._writing() as state:
            info, _ = state.objects[digest]
            state.objects[digest] = (info, data)

    def reopener(self) -> Callable[[], StoreBackend] | None:
        """This backend itself: a forked process holds a copy of its dicts, and only reads them."""
        return lambda: self

    # -- transactions ------------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        stack = self._stack()
        with self._writer:
            if stack:
                opened = stack[-1].copy()  # a savepoint: rolls back alone
            else:
                with self._mutex:
                    opened = self._committed.copy()
            with self._stack.layer(opened, lambda done, _parent: done, self._publish):
                yield

    def _publish(self, state: _State) -> None:
        with self._mutex:
            self._committed = state

    @contextmanager
    def _reading(self) -> Iterator[_State]:
        """This thread's transaction state if one is open (it sees its own writes), else the committed one."""
        stack = self._stack()
        if stack:
            yield stack[-1]
        else:
            with self._mutex:
                yield self._committed

    @contextmanager
    def _writing(self) -> Iterator[_State]:
        stack = self._stack()
        if stack:
            yield stack[-1]
        else:
            with self._writer, self._mutex:
                yield self._committed

    # -- objects -----------------------------------------------------------------------------------

    def put(self, digest: Digest, data: bytes, *, document: bool) -> None:
        with self._writing() as state:
            if digest not in state.objects:
                state.objects[digest] = (ObjectInfo(digest, document, time.time()), bytes(data))

    def get(self, digest: Digest) -> bytes | None:
        with self._reading() as state:
            stored = state.objects.get(digest)
        return None if stored is None else stored[1]

    def stat(self, digest: Digest) -> ObjectInfo | None:
        with self._reading() as state:
            stored = state.objects.get(digest)
        return None if stored is None else stored[0]

    def objects(self) -> Iterator[ObjectInfo]:
        with self._reading() as state:
            listing = sorted(state.objects.items())
        for _, (info, _data) in listing:
            yield info

    def delete(self, digests: Collection[Digest]) -> None:
        doomed = set(digests)
        with self._writing() as state:
            for digest in doomed:
                state.objects.pop(digest, None)
            state.forget(doomed)

    def count_incomplete(self) -> int:
        return 0  # a put is one dict assignment: nothing is ever half written

    def sweep_incomplete(self, before: float) -> int:
        return 0

    # -- refs --------------------------------------------------------------------------------------

    def get_ref(self, name: str) -> Digest | None:
        with self._reading() as state:
            return state.refs.get(name)

    def refs(self) -> dict[str, Digest]:
        with self._reading() as state:
            return dict(sorted(state.refs.items()))

    def set_ref(self, name: str, digest: Digest) -> None:
        with self._writing() as state:
            state.refs[name] = digest

    def compare_and_set_ref(self, name: str, expected: Digest | None, new: Digest) -> bool:
        with self._writing() as state:
            if state.refs.get(name) != expected:
                return False
            state.refs[name] = new
            return True

    def delete_ref(self, name: str) -> bool:
        with self._writing() as state:
            return state.refs.pop(name, None) is not None

    # -- action results ----------------------------------------------------------------------------

    def add_result(
        self, key: Digest, result: Digest, outputs: Collection[Digest], *, replacing: Digest | None = None
    ) -> None:
        with self._writing() as state:
            recorded = state.by_key.get(key, ())
            current = recorded[-1].result if recorded else None
            if current == result or current != replacing:
                return
            if current is not None:
                state.forget({current})
            state.record(RecordedResult(key, result, tuple(dict.fromkeys(outputs)), time.time()))

    def results(self, key: Digest) -> list[Digest]:
        with self._reading() as state:
            return [entry.result for entry in state.by_key.get(key, ())[-1:]]

    def producers(self, output: Digest) -> list[Digest]:
        with self._reading() as state:
            return list(state.by_output.get(output, ()))

    def results_since(self, since: float) -> list[Digest]:
        with self._reading() as state:
            return [entry.result for entry in state.log if entry.recorded >= since]

    # -- claims ------------------------------------------------------------------------------------

    def claimant(self, key: Digest) -> bytes | None:
        with self._reading() as state:
            return state.claims.get(key)

    def swap_claim(self, key: Digest, expected: bytes | None, new: bytes | None) -> bool:
        with self._writing() as state:
            if state.claims.get(key) != expected:
                return False
            if new is None:
                state.claims.pop(key, None)
            else:
                state.claims[key] = bytes(new)
            return True
