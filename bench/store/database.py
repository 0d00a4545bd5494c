"""The store's SQLite index: small objects packed in, refs, and the action cache.

One SQLite file in WAL mode serves several processes at once: SQLite serialises writers itself, so the store
takes no locks of its own, and a transaction is the unit of atomicity. Packing small objects here is what makes
10,000 small objects cost one transaction instead of 10,000 file creates.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import weakref
from pathlib import Path

__all__ = ["Database"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS objects (
    hex TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    is_document INTEGER NOT NULL,
    data BLOB,                      -- NULL: the bytes are a loose file
    created REAL NOT NULL
);                                  -- a rowid table: SQLite keeps large rows out of the key b-tree this way
CREATE TABLE IF NOT EXISTS refs (
    name TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    updated REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS action_results (
    key TEXT NOT NULL,
    result TEXT NOT NULL,
    recorded REAL NOT NULL,
    PRIMARY KEY (key, result)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS produced (
    output TEXT NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (output, result)
) WITHOUT ROWID;
"""


# SQLite forbids carrying a connection across fork() (a child's close can drop the parent's locks and lose
# writes), and doit's workers and process pools fork. So every open database closes its idle connection before
# a fork, and a connection inherited anyway is abandoned unclosed in the child and replaced.
_OPEN: weakref.WeakSet[Database] = weakref.WeakSet()
_ABANDONED: list[sqlite3.Connection] = []


def _close_before_fork() -> None:
    for database in list(_OPEN):
        if getattr(database._local, "depth", 0) == 0:
            database.close()


os.register_at_fork(before=_close_before_fork)


class Database:
    """A per-thread SQLite connection to ``path`` with explicit transactions."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        _OPEN.add(self)
        self.connection.executescript(_SCHEMA)

    @property
    def connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is not None and self._local.pid != os.getpid():
            _ABANDONED.append(connection)  # inherited through fork: never use it, never close it here
            connection = None
        if connection is None:
            connection = sqlite3.connect(self.path, timeout=120, isolation_level=None, check_same_thread=False)
            # Takes effect only when the file is created: large pages keep a packed object on one page, which
            # measured 2.7x faster than 4 KiB pages for 7 KB objects (benchmarks/store_ingest.py).
            connection.execute("PRAGMA page_size=65536")
            connection.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a committed transaction survives a killed process; only a power cut may lose
            # the newest ones, and never corrupts the file.
            connection.execute("PRAGMA synchronous=NORMAL")
            self._local.connection = connection
            self._local.pid = os.getpid()
            self._local.depth = 0
        return connection

    def begin(self) -> None:
        if self._local_depth() == 0:
            self.connection.execute("BEGIN IMMEDIATE")
        self._local.depth += 1

    def commit(self) -> None:
        self._local.depth -= 1
        if self._local.depth == 0:
            self.connection.execute("COMMIT")

    def rollback(self) -> None:
        self._local.depth -= 1
        if self._local.depth == 0:
            self.connection.execute("ROLLBACK")

    def _local_depth(self) -> int:
        self.connection  # noqa: B018 - opens the connection and initialises the depth for this thread
        depth: int = self._local.depth
        return depth

    def close(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None
