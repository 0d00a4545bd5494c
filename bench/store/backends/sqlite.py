"""Today's store: one SQLite index holding small objects, refs and the action cache, plus loose files.

Layout of a store directory::

    index.sqlite        small objects (packed), refs, the action cache
    objects/ab/<hex>    loose objects of PACK_LIMIT bytes or more
    tmp/                in-flight loose writes; never visible as objects

One SQLite file in WAL mode serves several processes at once: SQLite serialises writers itself, so the store
takes no locks of its own, and a transaction is the unit of atomicity. Packing small objects here is what makes
10,000 small objects cost one transaction instead of 10,000 file creates. A write is visible only once its row
commits: loose bytes are written to ``tmp/``, fsynced and hard-linked into place (an existing file is success),
then the row is inserted. This module holds all of the package's SQL.
"""

from __future__ import annotations

import contextlib
import math
import os
import sqlite3
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ...contracts import Digest
from ...errors import StoreError
from .base import ObjectInfo, StoreBackend
from .sqlite_errors import translate_sqlite_errors

__all__ = ["PACK_LIMIT", "SqliteBackend"]

# Objects below this size are packed into SQLite; measured in benchmarks/store_ingest.py.
PACK_LIMIT = 256 * 1024
_BATCH = 500  # objects per query in get_many; well under SQLite's limit on bound parameters

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
_OPEN: weakref.WeakSet[_Database] = weakref.WeakSet()
_ABANDONED: list[sqlite3.Connection] = []


def _close_before_fork() -> None:
    for database in list(_OPEN):
        if getattr(database._local, "depth", 0) == 0:
            database.close()


os.register_at_fork(before=_close_before_fork)


class _Database:
    """A per-thread SQLite connection to ``path`` with nestable transactions (savepoints inside the outer one)
    and work deferred until the outermost commit."""

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
            self._local.deferred = []
        return connection

    @contextmanager
    def transaction(self) -> Iterator[None]:
        connection = self.connection
        depth: int = self._local.depth
        deferred: list[Callable[[], object]] = self._local.deferred
        mark = len(deferred)
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
            else:
                connection.execute(f"ROLLBACK TO s{depth}")
                connection.execute(f"RELEASE s{depth}")
            del deferred[mark:]
            raise
        self._local.depth = depth
        if depth > 0:
            connection.execute(f"RELEASE s{depth}")
            return
        self._local.deferred = []
        connection.execute("COMMIT")
        for action in deferred:
            action()

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


@translate_sqlite_errors
class SqliteBackend(StoreBackend):
    """A store directory; safe to open from several processes and threads at once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        try:
            (root / "objects").mkdir(parents=True, exist_ok=True)
            (root / "tmp").mkdir(exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the store at {root}: {exc.strerror}; check the path and its permissions"
            ) from exc
        self._location = str(root.resolve())
        self._db = _Database(root / "index.sqlite")

    def __repr__(self) -> str:
        return f"SqliteBackend({str(self.root)!r})"

    @property
    def location(self) -> str:
        return self._location

    def transaction(self) -> contextlib.AbstractContextManager[None]:
        return self._db.transaction()

    def _execute(self, sql: str, parameters: Sequence[object] = ()) -> sqlite3.Cursor:
        return self._db.connection.execute(sql, parameters)

    # -- objects -----------------------------------------------------------------------------------

    def loose_path(self, hex_: str) -> Path:
        return self.root / "objects" / hex_[:2] / hex_

    def put(self, digest: Digest, data: bytes, *, document: bool) -> None:
        packed: bytes | None = data
        if len(data) >= PACK_LIMIT:
            if self.stat(digest) is not None:
                return
            self._write_loose(digest, data)
            packed = None
        self._execute(
            "INSERT OR IGNORE INTO objects (hex, size, is_document, data, created) VALUES (?, ?, ?, ?, ?)",
            (digest.hex, len(data), int(document), packed, time.time()),
        )

    def _write_loose(self, digest: Digest, data: bytes) -> None:
        final = self.loose_path(digest.hex)
        final.parent.mkdir(exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=self.root / "tmp", prefix=digest.hex[:16])
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            # FileExistsError: another writer finished the same object first, with identical bytes by construction.
            with contextlib.suppress(FileExistsError):
                os.link(temporary, final)
        finally:
            os.unlink(temporary)

    def get(self, digest: Digest) -> bytes | None:
        row = self._execute("SELECT size, data FROM objects WHERE hex = ?", (digest.hex,)).fetchone()
        return self._bytes(digest, row)

    def get_many(self, digests: Sequence[Digest]) -> Iterator[bytes | None]:
        """A batch of objects per query: one round trip per object is most of the cost of reading a tree of
        small files."""
        for start in range(0, len(digests), _BATCH):
            batch = digests[start : start + _BATCH]
            query = f"SELECT hex, size, data FROM objects WHERE hex IN ({','.join('?' * len(batch))})"
            rows = {row[0]: row[1:] for row in self._execute(query, [digest.hex for digest in batch])}
            for digest in batch:
                yield self._bytes(digest, rows.get(digest.hex))

    def _bytes(self, digest: Digest, row: tuple[int, bytes | None] | None) -> bytes | None:
        """The bytes an index row stands for: packed in it, or the loose file it names."""
        if row is None or row[0] != digest.size:
            return None
        if row[1] is not None:
            return bytes(row[1])
        try:
            return self.loose_path(digest.hex).read_bytes()
        except FileNotFoundError:
            return None

    def stat(self, digest: Digest) -> ObjectInfo | None:
        row = self._execute("SELECT size, is_document, created FROM objects WHERE hex = ?", (digest.hex,)).fetchone()
        if row is None or row[0] != digest.size:
            return None
        return ObjectInfo(digest, bool(row[1]), row[2])

    def objects(self) -> Iterator[ObjectInfo]:
        rows = self._execute("SELECT hex, size, is_document, created FROM objects ORDER BY hex").fetchall()
        for hex_, size, is_document, created in rows:
            yield ObjectInfo(Digest.from_parts(hex_, size), bool(is_document), created)

    def delete(self, digests: Collection[Digest]) -> None:
        if not digests:
            return
        with self.transaction():
            self._db.connection.executemany("DELETE FROM objects WHERE hex = ?", [(digest.hex,) for digest in digests])
            # One pass over each action table: entries whose result object is gone.
            for table in ("action_results", "produced"):
                self._execute(
                    f"DELETE FROM {table} WHERE NOT EXISTS "
                    f"(SELECT 1 FROM objects WHERE objects.hex = substr({table}.result, 8, 64))"
                )
        # Loose files go only once the deletion is committed: a rollback must find its objects whole.
        hexes = [digest.hex for digest in digests]
        self._db.after_commit(lambda: self._unlink(self._unrecorded(hexes)))

    def _unrecorded(self, hexes: Iterable[str]) -> list[Path]:
        """The loose files of ``hexes`` that exist with no row recording them (a row may be back since: the
        same bytes put again)."""
        paths = ((hex_, self.loose_path(hex_)) for hex_ in hexes)
        return [
            path
            for hex_, path in paths
            if path.exists() and self._execute("SELECT 1 FROM objects WHERE hex = ?", (hex_,)).fetchone() is None
        ]

    @staticmethod
    def _unlink(paths: Iterable[Path]) -> int:
        removed = 0
        for path in paths:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
        return removed

    def _incomplete(self, before: float) -> list[Path]:
        """Temporaries, and loose files with no row: a writer killed between linking the bytes and recording
        them. Only those older than ``before``, as a writer in the middle of a transaction has linked files it
        has not recorded yet."""

        def older(path: Path) -> bool:
            try:
                return path.stat().st_mtime < before
            except FileNotFoundError:  # finished or removed by another process since it was listed
                return False

        loose = [path.name for path in (self.root / "objects").glob("??/*") if older(path)]
        return self._unrecorded(loose) + [path for path in (self.root / "tmp").iterdir() if older(path)]

    def count_incomplete(self) -> int:
        return len(self._incomplete(math.inf))

    def sweep_incomplete(self, before: float) -> int:
        return self._unlink(self._incomplete(before))

    # -- refs --------------------------------------------------------------------------------------

    def get_ref(self, name: str) -> Digest | None:
        row = self._execute("SELECT digest FROM refs WHERE name = ?", (name,)).fetchone()
        return None if row is None else Digest(row[0])

    def refs(self) -> dict[str, Digest]:
        rows = self._execute("SELECT name, digest FROM refs ORDER BY name").fetchall()
        return {name: Digest(digest) for name, digest in rows}

    def set_ref(self, name: str, digest: Digest) -> None:
        self._execute(
            "INSERT INTO refs (name, digest, updated) VALUES (?, ?, ?) "
            "ON CONFLICT(name) DO UPDATE SET digest = excluded.digest, updated = excluded.updated",
            (name, str(digest), time.time()),
        )

    def compare_and_set_ref(self, name: str, expected: Digest | None, new: Digest) -> bool:
        # One statement each way, so the comparison and the write are one atomic step for SQLite.
        if expected is None:
            cursor = self._execute(
                "INSERT INTO refs (name, digest, updated) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING",
                (name, str(new), time.time()),
            )
        else:
            cursor = self._execute(
                "UPDATE refs SET digest = ?, updated = ? WHERE name = ? AND digest = ?",
                (str(new), time.time(), name, str(expected)),
            )
        return cursor.rowcount == 1

    def delete_ref(self, name: str) -> bool:
        return self._execute("DELETE FROM refs WHERE name = ?", (name,)).rowcount > 0

    # -- action results ----------------------------------------------------------------------------

    def add_result(self, key: Digest, result: Digest, outputs: Collection[Digest]) -> None:
        with self.transaction():
            self._execute(
                "INSERT OR IGNORE INTO action_results (key, result, recorded) VALUES (?, ?, ?)",
                (str(key), str(result), time.time()),
            )
            self._db.connection.executemany(
                "INSERT OR IGNORE INTO produced (output, result) VALUES (?, ?)",
                [(str(output), str(result)) for output in outputs],
            )

    def results(self, key: Digest) -> list[Digest]:
        rows = self._execute(
            "SELECT result FROM action_results WHERE key = ? ORDER BY recorded DESC", (str(key),)
        ).fetchall()
        return [Digest(result) for (result,) in rows]

    def producers(self, output: Digest) -> list[Digest]:
        rows = self._execute("SELECT result FROM produced WHERE output = ?", (str(output),)).fetchall()
        return [Digest(result) for (result,) in rows]

    def results_since(self, since: float) -> list[Digest]:
        rows = self._execute(
            "SELECT result FROM action_results WHERE recorded >= ? ORDER BY recorded", (since,)
        ).fetchall()
        return [Digest(result) for (result,) in rows]
