"""The store backend interface: what a place that keeps objects, refs and action results must do.

A backend keeps bytes and facts; the :class:`~bench.store.Store` facade above it names bytes by their digest,
re-hashes every read and checks that refs point at stored objects. So a backend never hashes and never
validates documents, and the same keys (digests, ref names, action keys) work on every backend: today's SQLite
index with loose files, memory, and later a remote object store.

The contract, which ``tests/store/store_contract.py`` checks for every backend:

- **Objects are written once.** Putting an object that exists is success and changes nothing (its flag and
  creation time stay the first writer's), so two workers storing the same bytes never conflict; a remote
  backend implements this as a conditional put.
- **Reads return raw bytes or None.** Verification belongs to the facade; a backend may return corrupt bytes.
- **Refs move by compare-and-set** when several writers may race: a stale expectation changes nothing.
- **A key has one result.** The first result recorded for a key is its result; a second one is refused by
  changing nothing, as a second put of an object is, so two workers that computed one key at once leave one
  result and every reader sees that one. A result is replaced only by naming the one it replaces (the producing
  action ran again because that result's outputs are gone). Deleting the result object (gc) removes its entries.
- **Claims move by compare-and-set** (:meth:`StoreBackend.swap_claim`): who computes a key now, so a key is
  computed once however many workers ask for it (:mod:`bench.store.claims` decides what a claim holds).
- **A transaction is all or nothing** for the thread that opened it: writes inside become visible to others
  together at its end, or not at all if it raises. Nested transactions roll back on their own. A remote backend
  may buffer writes and flush them at the end.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

from ...contracts import Digest

__all__ = ["ObjectInfo", "RecordedResult", "StoreBackend"]

_CHUNK = 500  # objects per chunk of get_unordered, where a backend does not choose its own


@dataclass(frozen=True, slots=True)
class ObjectInfo:
    """What a backend knows about an object besides its bytes."""

    digest: Digest
    is_document: bool  # canonical JSON whose digests gc follows and fsck checks
    created: float  # time.time() of the first put; gc spares objects younger than its grace period


@dataclass(frozen=True, slots=True)
class RecordedResult:
    """One action result as a backend keeps it: which key, which result, its outputs, when it was recorded."""

    key: Digest
    result: Digest
    outputs: tuple[Digest, ...]
    recorded: float


class StoreBackend(abc.ABC):
    """Objects by digest, refs by name, action results by key and by output."""

    @property
    @abc.abstractmethod
    def location(self) -> str:
        """Identifies the backend's storage: equal for two backends over the same objects, so caches may key
        on it (a directory's absolute path, a bucket URL, a unique name in memory)."""

    # -- objects -----------------------------------------------------------------------------------

    @abc.abstractmethod
    def put(self, digest: Digest, data: bytes, *, document: bool) -> None:
        """Keep ``data`` under ``digest`` (computed by the caller); an object that exists is success."""

    def put_many(self, items: Sequence[tuple[Digest, bytes]], *, document: bool) -> None:
        """:meth:`put` of every ``(digest, data)`` in ``items``, in one transaction; override to write in bulk."""
        with self.transaction():
            for digest, data in items:
                self.put(digest, data, document=document)

    @abc.abstractmethod
    def get(self, digest: Digest) -> bytes | None:
        """The stored bytes of ``digest``, unverified; None if absent or its bytes are lost."""

    def get_many(self, digests: Sequence[Digest]) -> Iterator[bytes | None]:
        """What :meth:`get` returns for each digest, in the order given; override to fetch in batches."""
        for digest in digests:
            yield self.get(digest)

    def get_unordered(self, digests: Sequence[Digest]) -> Iterator[Sequence[tuple[Digest, bytes | None]]]:
        """Each digest with what :meth:`get` returns for it, in chunks, in whatever order the backend reads
        fastest (chunks, not single objects: a tree's files are read a few hundred at a time, so a layer of
        iteration per object would cost more than the read); override where that is not the order given."""
        for start in range(0, len(digests), _CHUNK):
            chunk = digests[start : start + _CHUNK]
            yield list(zip(chunk, self.get_many(chunk), strict=True))

    @abc.abstractmethod
    def stat(self, digest: Digest) -> ObjectInfo | None:
        """The facts of a stored object without its bytes; None if absent. This is the presence check."""

    def stat_many(self, digests: Sequence[Digest]) -> Iterator[ObjectInfo | None]:
        """What :meth:`stat` returns for each digest, in the order given; override to ask in batches."""
        for digest in digests:
            yield self.stat(digest)

    @abc.abstractmethod
    def objects(self) -> Iterator[ObjectInfo]:
        """Every stored object, in digest order."""

    def with_prefix(self, hex_prefix: str, limit: int) -> list[Digest]:
        """Up to ``limit`` stored digests whose hex starts with ``hex_prefix``, in digest order (for resolving the
        short digests people type); override where the index can seek."""
        found = [info.digest for info in self.objects() if info.digest.hex.startswith(hex_prefix)]
        return found[:limit]

    @abc.abstractmethod
    def delete(self, digests: Collection[Digest]) -> None:
        """Remove objects (gc only), with the action-cache entries whose result is one of them."""

    @abc.abstractmethod
    def count_incomplete(self) -> int:
        """Writes begun and never recorded (a killed writer's leftovers); invisible as objects."""

    @abc.abstractmethod
    def sweep_incomplete(self, before: float) -> int:
        """Remove incomplete writes begun before ``before`` (a time.time() value); returns how many."""

    # -- refs --------------------------------------------------------------------------------------

    @abc.abstractmethod
    def get_ref(self, name: str) -> Digest | None: ...

    @abc.abstractmethod
    def refs(self) -> dict[str, Digest]:
        """Every ref, in name order."""

    @abc.abstractmethod
    def set_ref(self, name: str, digest: Digest) -> None:
        """Point ``name`` at ``digest`` whatever it pointed at (last writer wins)."""

    @abc.abstractmethod
    def compare_and_set_ref(self, name: str, expected: Digest | None, new: Digest) -> bool:
        """Point ``name`` at ``new`` only if it points at ``expected`` now (None: only if it does not exist);
        False, changing nothing, otherwise."""

    @abc.abstractmethod
    def delete_ref(self, name: str) -> bool:
        """Remove ``name``; False if there was no such ref."""

    # -- action results ----------------------------------------------------------------------------

    @abc.abstractmethod
    def add_result(
        self, key: Digest, result: Digest, outputs: Collection[Digest], *, replacing: Digest | None = None
    ) -> None:
        """Record ``result`` as the result of ``key`` and as a producer of each output, stamped with the time it
        is recorded, only if the key's result is ``replacing`` now (None: only if it has none); otherwise change
        nothing. Recording the key's own result again changes nothing. :meth:`results` says which result won."""

    @abc.abstractmethod
    def results(self, key: Digest) -> list[Digest]:
        """The result recorded for ``key``: none or one (a store written before keys had one result answers
        with its newest)."""

    def results_many(self, keys: Sequence[Digest]) -> dict[Digest, list[Digest]]:
        """:meth:`results` of each key that has a result; override to ask in batches."""
        return {key: found for key in dict.fromkeys(keys) if (found := self.results(key))}

    @abc.abstractmethod
    def producers(self, output: Digest) -> list[Digest]:
        """Results that list ``output`` among their outputs, in no promised order."""

    @abc.abstractmethod
    def results_since(self, since: float) -> list[Digest]:
        """Results recorded at or after ``since`` (a time.time() value), oldest first."""

    # -- claims ------------------------------------------------------------------------------------

    @abc.abstractmethod
    def claimant(self, key: Digest) -> bytes | None:
        """The claim on ``key`` (opaque bytes: who computes it, see :mod:`bench.store.claims`), or None."""

    @abc.abstractmethod
    def swap_claim(self, key: Digest, expected: bytes | None, new: bytes | None) -> bool:
        """Make the claim on ``key`` ``new`` (None: remove it) only if it is ``expected`` now (None: only if
        there is none); False, changing nothing, otherwise. A claim is a fact about now: ask outside a
        transaction."""

    # -- caching -----------------------------------------------------------------------------------

    def uncached(self) -> StoreBackend:
        """The same storage without a local cache in front, if this backend has one: what fsck checks."""
        return self

    # -- forked readers ----------------------------------------------------------------------------

    def reopener(self) -> Callable[[], StoreBackend] | None:
        """How a process forked from this one opens its own handle on the same storage, to be called there (a
        connection or socket must never cross a fork); None when this backend cannot be read from a forked
        process, which then leaves the reading to this one."""
        return None

    # -- transactions ------------------------------------------------------------------------------

    @abc.abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """All writes of this thread inside become visible together, or none if the block raises."""
