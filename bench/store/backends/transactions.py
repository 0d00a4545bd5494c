"""Per-thread SQLite connections with nestable transactions, each outermost transaction with its own pack.

SQLite forbids carrying a connection across fork() (a child's close can drop the parent's locks and lose
writes), and doit's workers and process pools fork. So every open database closes its idle connection before a
fork, and a connection inherited anyway is abandoned unclosed in the child and replaced.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .packs import PackWriter

__all__ = ["Database"]

_PAGE_BYTES = 65536
_CHECKPOINT_PAGES = 64
_OPEN: weakref.WeakSet[Database] = weakref.WeakSet()
_ABANDONED: list[sqlite3.Connection] = []


def _close_before_fork() -> None:
    for database in list(_OPEN):
        if getattr(database._local, "depth", 0) == 0:
            database.close()


os.register_at_fork(before=_close_before_fork)


class Database:
    """A per-thread SQLite connection to ``path`` with nestable transactions (savepoints inside the outer one),
    the outermost transaction's pack, and work deferred until the outermost commit."""

    def __init__(self, path: Path, packs: Path) -> None:
        self.path = path
        self.packs = packs
        self._local = threading.local()
        _OPEN.add(self)

    @property
    def connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is not None and self._local.pid != os.getpid():
            _ABANDONED.append(connection)  # inherited through fork: never use it, never close it here
            connection = None
        if connection is None:
            connection = sqlite3.connect(self.path, timeout=120, isolation_level=None, check_same_thread=False)
            # Takes effect only when the file is created: large pages keep an inline object on one page, which
            # measured 2.7x faster than 4 KiB pages for 7 KB objects (benchmarks/store_ingest.py).
            connection.execute(f"PRAGMA page_size={_PAGE_BYTES}")
            connection.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a committed transaction survives a killed process; only a power cut may lose
            # the newest ones, and never corrupts the file.
            connection.execute("PRAGMA synchronous=NORMAL")
            # SQLite's default page cache is 2 MiB, 31 of the large pages: a bulk write of 40,000 objects then
            # re-reads index pages it just evicted (their keys are random). 32 MiB, taken only as it is used,
            # cut those inserts by a third (benchmarks/store_ingest.py at 4x).
            connection.execute("PRAGMA cache_size=-32768")
            # SQLite checkpoints the WAL into the database every 1,000 pages by default: 64 MiB of these pages, so a
            # demo run whose finished store is 14 MB grew a WAL past 30 MB, and a disk that would hold the result
            # could not hold the run. Every 64 pages (4 MiB), and the WAL file cut back to that size once a
            # checkpoint has emptied it, keep the store's peak within a few MiB of its final size.
            connection.execute(f"PRAGMA wal_autocheckpoint={_CHECKPOINT_PAGES}")
            connection.execute(f"PRAGMA journal_size_limit={_CHECKPOINT_PAGES * _PAGE_BYTES}")
            self._local.connection = connection
            self._local.pid = os.getpid()
            self._local.depth = 0
            self._local.deferred = []
            self._local.pack = None
        return connection

    @contextmanager
    def transaction(self) -> Iterator[None]:
        connection = self.connection
        depth: int = self._local.depth
        deferred: list[Callable[[], object]] = self._local.deferred
        mark = len(deferred)
        pack_mark = self._local.pack.size if self._local.pack is not None else 0
        # IMMEDIATE takes the write lock at once: a transaction that reads first and writes later cannot then
        # fail to upgrade its lock because another writer got in between.
        connection.execute("BEGIN IMMEDIATE" if depth == 0 else f"SAVEPOINT s{depth}")
        self._local.depth = depth + 1
        try:
            yield
        except BaseException:
            self._local.depth = depth
            if depth == 0:
                connection.execute("ROLLBACK")
                self._drop_pack()
            else:
                connection.execute(f"ROLLBACK TO s{depth}")
                connection.execute(f"RELEASE s{depth}")
                if self._local.pack is not None:
                    self._local.pack.truncate(pack_mark)
            del deferred[mark:]
            raise
        self._local.depth = depth
        if depth > 0:
            connection.execute(f"RELEASE s{depth}")
            return
        self._local.deferred = []
        self._commit(connection)
        for action in deferred:
            action()

    def _commit(self, connection: sqlite3.Connection) -> None:
        """Sync the transaction's pack, then commit the rows naming it; on failure neither stays."""
        pack: PackWriter | None = self._local.pack
        try:
            if pack is not None:
                pack.seal()
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            self._drop_pack()
            raise
        self._local.pack = None

    def _drop_pack(self) -> None:
        pack: PackWriter | None = self._local.pack
        self._local.pack = None
        if pack is not None:
            pack.discard()

    @property
    def in_transaction(self) -> bool:
        """Whether this thread has a transaction open."""
        return bool(getattr(self._local, "depth", 0))

    def pack(self) -> PackWriter:
        """The pack of this thread's open transaction, created on first use."""
        assert self._local.depth > 0, "a pack belongs to a transaction"
        if self._local.pack is None:
            self._local.pack = PackWriter(self.packs)
        pack: PackWriter = self._local.pack
        return pack

    def after_commit(self, action: Callable[[], object]) -> None:
        """Run ``action`` once this thread's writes are committed: now, outside a transaction."""
        if self._local.depth == 0:
            action()
        else:
            self._local.deferred.append(action)

    def close(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None
