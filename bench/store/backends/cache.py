"""A local cache in front of a remote store: objects and action results, kept in a store directory on this node.

Objects are immutable by digest, so a copy read or written once is good for as long as the remote keeps the
object; action results are append-only, so a cached list is good until gc forgets some of them. What can go
stale is only what gc deletes, so the cache is named by the remote's *epoch*: a token gc replaces before it
deletes anything. A process opening the store reads the epoch once and uses the cache directory of that epoch,
so after a gc every node starts a fresh cache (old epoch directories can be removed whenever no run is using
them). Refs move, so they are never cached, and an absence is never cached either.

A cached copy is re-hashed before use: a flipped bit on this node's disk costs a fetch, not a refusal.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from ...contracts import Digest
from .base import ObjectInfo
from .sqlite import SqliteBackend

__all__ = ["CACHE_LIMIT", "LocalCache", "default_cache_root"]

# Objects up to this size are cached: every document and source file, not image archives (the engine keeps those).
CACHE_LIMIT = 64 * 1024 * 1024


def default_cache_root() -> Path:
    """``$STELE_BENCH_CACHE/store`` or ``~/.cache/stele-bench/store`` (``$XDG_CACHE_HOME`` respected)."""
    root = (
        os.environ.get("STELE_BENCH_CACHE")
        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "stele-bench"
    )
    return Path(root) / "store"


class LocalCache:
    """Verified copies of a remote store's objects and action results, in a store directory."""

    def __init__(self, root: Path, remote: str, epoch: str) -> None:
        name = hashlib.sha256(remote.encode()).hexdigest()[:16]
        self.directory = root / name / epoch
        self._store = SqliteBackend(self.directory)

    # -- objects -----------------------------------------------------------------------------------

    def get(self, digest: Digest) -> bytes | None:
        return self._verified(digest, self._store.get(digest))

    def get_many(self, digests: Sequence[Digest]) -> list[bytes | None]:
        return [self._verified(d, data) for d, data in zip(digests, self._store.get_many(digests), strict=True)]

    def _verified(self, digest: Digest, data: bytes | None) -> bytes | None:
        if data is not None and Digest.of(data) != digest:
            self._store.delete([digest])  # refetched from the remote next time
            return None
        return data

    def stat(self, digest: Digest) -> ObjectInfo | None:
        return self._store.stat(digest)

    def keep(self, digest: Digest, data: bytes, document: bool) -> None:
        """Keep a copy of an object the remote is known to hold (small enough to be worth it)."""
        if len(data) <= CACHE_LIMIT:
            self._store.put(digest, data, document=document)

    def forget(self, digests: Sequence[Digest]) -> None:
        self._store.delete(digests)

    # -- action results ----------------------------------------------------------------------------

    def results(self, key: Digest) -> list[Digest]:
        """The cached result of ``key`` (none or one); empty when none is cached (ask the remote)."""
        return self._store.results(key)

    def keep_result(self, key: Digest, result: Digest) -> None:
        """Keep the result the remote recorded for ``key``, in place of any other cached for it."""
        cached = self._store.results(key)
        self._store.add_result(key, result, (), replacing=cached[0] if cached else None)
