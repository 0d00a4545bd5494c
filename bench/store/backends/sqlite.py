"""Today's store: one SQLite index of objects, refs and the action cache; bytes in rows, packs or loose files.

Layout of a store directory::

    index.sqlite        every object's row (small objects' bytes inline), refs, the action cache
    packs/<name>.pack   the bytes of bulk writes (a tree's files), one pack per transaction (see packs.py)
    objects/ab/<hex>    objects of PACK_LIMIT bytes or more written one at a time (loose)
    tmp/                in-flight loose writes; never visible as objects

One SQLite file in WAL mode serves several processes at once: SQLite serialises writers itself, so the store
takes no locks of its own, and a transaction is the unit of atomicity. Keeping small objects in rows is what
makes 10,000 small objects cost one transaction instead of 10,000 file creates; appending a bulk write's bytes to
one pack is what makes them cost one file write instead of two (a row's bytes go to the WAL and again to the
database at the checkpoint). A write is visible only once its row commits: loose bytes are written to ``tmp/``,
fsynced and hard-linked into place (an existing file is success), a pack is synced before its transaction
commits, then the row is visible. This module and :mod:`.sqlite_schema` (the tables) hold all of the package's
SQL; :mod:`.loose` writes and reads the loose files.
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence, Sized
from pathlib import Path

from ...contracts import Digest
from ...errors import StoreError
from .base import ObjectInfo, StoreBackend
from .loose import LooseFiles, older, unlink_all
from .packs import PackReader, pack_names, pack_path
from .sqlite_errors import translate_sqlite_errors
from .sqlite_schema import OBJECT_COLUMNS, create_schema
from .transactions import Database

__all__ = ["INLINE_LIMIT", "PACK_LIMIT", "SqliteBackend"]

# A single put keeps an object below this size in its row and writes a larger one as a loose file.
PACK_LIMIT = 256 * 1024
# A bulk put keeps an object below this size in its row and appends a larger one to its transaction's pack: a
# row costs a fixed overhead that dwarfs a small object's bytes, a pack entry costs its bytes once.
INLINE_LIMIT = 1024
_BATCH = 500  # objects per query in get_many and put_many; well under SQLite's limit on bound parameters


@translate_sqlite_errors
class SqliteBackend(StoreBackend):
    """A store directory; safe to open from several processes and threads at once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.packs = root / "packs"
        try:
            for directory in (root / "objects", self.packs, root / "tmp"):
                directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the store at {root}: {exc.strerror}; check the path and its permissions"
            ) from exc
        self._location = str(root.resolve())
        self._db = Database(root / "index.sqlite", self.packs)
        create_schema(self._db)
        self.loose = LooseFiles(root)

    def __repr__(self) -> str:
        return f"SqliteBackend({str(self.root)!r})"

    @property
    def location(self) -> str:
        return self._location

    def transaction(self) -> contextlib.AbstractContextManager[None]:
        return self._db.transaction()

    def reopener(self) -> Callable[[], StoreBackend] | None:
        """A new backend over the same directory, with its own connection and pack descriptors. None inside a
        transaction: its connection then stays open across the fork (see ``transactions.py``), and a connection
        the child opened would share SQLite's record of that connection's locks, which the child does not hold."""
        if self._db.in_transaction:
            return None
        root = self.root
        return lambda: SqliteBackend(root)

    def _execute(self, sql: str, parameters: Sequence[object] = ()) -> sqlite3.Cursor:
        return self._db.connection.execute(sql, parameters)

    # -- objects -----------------------------------------------------------------------------------

    def loose_path(self, hex_: str) -> Path:
        return self.loose.path(hex_)

    def put(self, digest: Digest, data: bytes, *, document: bool) -> None:
        # Outside a transaction, an object already stored costs a read, not a write transaction: a no-op rerun
        # stores every action key again, and a thousand write transactions would wait on each other and the disk.
        if (len(data) >= PACK_LIMIT or not self._db.in_transaction) and self.stat(digest) is not None:
            return
        inline: bytes | None = data
        if len(data) >= PACK_LIMIT:
            self.loose.write(digest, data)
            inline = None
        self._execute(
            f"INSERT OR IGNORE INTO objects ({OBJECT_COLUMNS}) VALUES (?, ?, ?, ?, ?, NULL, NULL)",
            (digest.hex, len(data), int(document), inline, time.time()),
        )

    def put_many(self, items: Sequence[tuple[Digest, bytes]], *, document: bool) -> None:
        """One transaction: objects below INLINE_LIMIT become rows, the others are appended to its pack."""
        with self.transaction():
            for start in range(0, len(items), _BATCH):
                self._put_batch(items[start : start + _BATCH], int(document))

    def _put_batch(self, batch: Sequence[tuple[Digest, bytes]], document: int) -> None:
        hexes = [digest.hex for digest, _ in batch]
        present = self._present(hexes)
        rows: list[tuple[str, int, int, bytes | None, float, str | None, int | None]] = []
        packed: list[bytes] = []
        created = time.time()
        for hex_, (_, data) in zip(hexes, batch, strict=True):
            if hex_ in present:
                continue
            present.add(hex_)
            size = len(data)
            if size < INLINE_LIMIT:
                rows.append((hex_, size, document, data, created, None, None))
            else:
                rows.append((hex_, size, document, None, created, None, None))
                packed.append(data)
        if packed:
            pack = self._db.pack()
            offsets = iter(pack.append(packed))
            rows = [row if row[3] is not None else (*row[:5], pack.name, next(offsets)) for row in rows]
        self._db.connection.executemany(
            f"INSERT OR IGNORE INTO objects ({OBJECT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)", rows
        )

    def _present(self, hexes: Sequence[str]) -> set[str]:
        query = f"SELECT hex FROM objects WHERE hex IN {_marks(hexes)}"
        return {row[0] for row in self._execute(query, hexes)}

    def get(self, digest: Digest) -> bytes | None:
        return next(self.get_many([digest]))

    def get_many(self, digests: Sequence[Digest]) -> Iterator[bytes | None]:
        """A batch of objects per query: one round trip per object is most of the cost of reading a tree of
        small files. Packed objects of a batch are read together, neighbours in one ``pread``."""
        with PackReader(self.packs) as reader:
            for start in range(0, len(digests), _BATCH):
                found, packed = self._locate(digests[start : start + _BATCH])
                for (index, _), data in zip(packed, reader.read_many([where for _, where in packed]), strict=True):
                    found[index] = data
                yield from found

    def get_unordered(self, digests: Sequence[Digest]) -> Iterator[Sequence[tuple[Digest, bytes | None]]]:
        """Rows and loose files as each query batch finds them, then every packed object in pack order: a
        directory's files lie far apart in a pack written in git's order, so reading in the order asked took a
        ``pread`` per object or two on a large tree, where pack order takes one per MiB at any size."""
        packed: list[Digest] = []
        wanted: list[tuple[str, int, int]] = []
        for start in range(0, len(digests), _BATCH):
            batch = digests[start : start + _BATCH]
            found, located = self._locate(batch)
            waiting = {index for index, _ in located}
            yield [
                (digest, data)
                for index, (digest, data) in enumerate(zip(batch, found, strict=True))
                if index not in waiting
            ]
            packed += (batch[index] for index, _ in located)
            wanted += (where for _, where in located)
        with PackReader(self.packs) as reader:
            for run in reader.read_runs(wanted):
                yield [(packed[index], data) for index, data in run]

    def _locate(self, batch: Sequence[Digest]) -> tuple[list[bytes | None], list[tuple[int, tuple[str, int, int]]]]:
        """The bytes of each object of ``batch`` kept in its row or a loose file (None if absent), and where in
        which pack each packed one lies (its place in ``batch``, and ``(pack, offset, size)``)."""
        hexes = [digest.hex for digest in batch]
        query = f"SELECT hex, size, data, pack, pack_offset FROM objects WHERE hex IN {_marks(hexes)}"
        rows = {row[0]: row[1:] for row in self._execute(query, hexes)}
        found: list[bytes | None] = [None] * len(batch)
        packed: list[tuple[int, tuple[str, int, int]]] = []
        for index, (digest, hex_) in enumerate(zip(batch, hexes, strict=True)):
            row = rows.get(hex_)
            if row is None or row[0] != digest.size:
                continue
            size, inline, pack, offset = row
            if inline is not None:
                found[index] = inline
            elif pack is not None:
                packed.append((index, (pack, offset, size)))
            else:
                found[index] = self.loose.read(hex_)
        return found, packed

    def stat(self, digest: Digest) -> ObjectInfo | None:
        row = self._execute("SELECT size, is_document, created FROM objects WHERE hex = ?", (digest.hex,)).fetchone()
        if row is None or row[0] != digest.size:
            return None
        return ObjectInfo(digest, bool(row[1]), row[2])

    def stat_many(self, digests: Sequence[Digest]) -> Iterator[ObjectInfo | None]:
        """A batch of digests per query: a no-op rerun asks after every input, key, result and output of a plan."""
        for start in range(0, len(digests), _BATCH):
            batch = digests[start : start + _BATCH]
            hexes = [digest.hex for digest in batch]
            query = f"SELECT hex, size, is_document, created FROM objects WHERE hex IN {_marks(hexes)}"
            rows = {row[0]: row[1:] for row in self._execute(query, hexes)}
            for digest, hex_ in zip(batch, hexes, strict=True):
                row = rows.get(hex_)
                yield None if row is None or row[0] != digest.size else ObjectInfo(digest, bool(row[1]), row[2])

    def objects(self) -> Iterator[ObjectInfo]:
        rows = self._execute("SELECT hex, size, is_document, created FROM objects ORDER BY hex").fetchall()
        for hex_, size, is_document, created in rows:
            yield ObjectInfo(Digest.from_parts(hex_, size), bool(is_document), created)

    def with_prefix(self, hex_prefix: str, limit: int) -> list[Digest]:
        # A range over the primary key: the prefix and the prefix followed by the highest hex digit bound it.
        rows = self._execute(
            "SELECT hex, size FROM objects WHERE hex >= ? AND hex <= ? ORDER BY hex LIMIT ?",
            (hex_prefix, hex_prefix + "g", limit),
        ).fetchall()
        return [Digest.from_parts(hex_, size) for hex_, size in rows]

    def delete(self, digests: Collection[Digest]) -> None:
        if not digests:
            return
        hexes = [digest.hex for digest in digests]
        with self.transaction():
            packs: set[str] = set()
            for start in range(0, len(hexes), _BATCH):
                batch = hexes[start : start + _BATCH]
                query = f"SELECT DISTINCT pack FROM objects WHERE pack IS NOT NULL AND hex IN {_marks(batch)}"
                packs.update(row[0] for row in self._execute(query, batch))
            self._db.connection.executemany("DELETE FROM objects WHERE hex = ?", [(hex_,) for hex_ in hexes])
            # One pass over each action table: entries whose result object is gone.
            for table in ("action_results", "produced"):
                self._execute(
                    f"DELETE FROM {table} WHERE NOT EXISTS "
                    f"(SELECT 1 FROM objects WHERE objects.hex = substr({table}.result, 8, 64))"
                )
        # Files go only once the deletion is committed: a rollback must find its objects whole. A pack goes
        # when no row names it any more.
        self._db.after_commit(lambda: unlink_all(self._unrecorded(hexes) + self._unnamed(packs)))

    def _unrecorded(self, hexes: Iterable[str]) -> list[Path]:
        """The loose files of ``hexes`` that exist with no row recording them (a row may be back since: the
        same bytes put again)."""
        paths = ((hex_, self.loose_path(hex_)) for hex_ in hexes)
        return [
            path
            for hex_, path in paths
            if path.exists() and self._execute("SELECT 1 FROM objects WHERE hex = ?", (hex_,)).fetchone() is None
        ]

    def _unnamed(self, packs: Iterable[str]) -> list[Path]:
        """The files of ``packs`` that no row names. One pass over the index: an index on the pack column cost
        40% of a bulk insert, to speed up only gc and fsck."""
        named = {row[0] for row in self._execute("SELECT DISTINCT pack FROM objects WHERE pack IS NOT NULL")}
        return [pack_path(self.packs, name) for name in packs if name not in named]

    def _incomplete(self, before: float) -> list[Path]:
        """Temporaries, loose files with no row (a writer killed between linking the bytes and recording them)
        and packs no row names (a writer killed before its commit). Only those older than ``before``, as a
        writer in the middle of a transaction has written files it has not recorded yet."""

        packs = [name for name in pack_names(self.packs) if older(pack_path(self.packs, name), before)]
        unrecorded = self._unrecorded(self.loose.names_older(before))
        return unrecorded + self._unnamed(packs) + self.loose.temporaries_older(before)

    def count_incomplete(self) -> int:
        return len(self._incomplete(math.inf))

    def sweep_incomplete(self, before: float) -> int:
        return unlink_all(self._incomplete(before))

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

    def add_result(
        self, key: Digest, result: Digest, outputs: Collection[Digest], *, replacing: Digest | None = None
    ) -> None:
        # One write transaction (BEGIN IMMEDIATE): no other writer comes between reading the key's result and
        # recording this one, so of two workers recording one key, the second finds the first's and stops.
        with self.transaction():
            row = self._execute(
                "SELECT result FROM action_results WHERE key = ? ORDER BY recorded DESC LIMIT 1", (str(key),)
            ).fetchone()
            current = None if row is None else row[0]
            if current == str(result) or current != (None if replacing is None else str(replacing)):
                return
            if current is not None:
                self._execute("DELETE FROM action_results WHERE key = ?", (str(key),))
                self._execute("DELETE FROM produced WHERE result = ?", (current,))
            self._execute(
                "INSERT INTO action_results (key, result, recorded) VALUES (?, ?, ?)",
                (str(key), str(result), time.time()),
            )
            self._db.connection.executemany(
                "INSERT OR IGNORE INTO produced (output, result) VALUES (?, ?)",
                [(str(output), str(result)) for output in outputs],
            )

    def results(self, key: Digest) -> list[Digest]:
        return self.results_many([key]).get(key, [])

    def results_many(self, keys: Sequence[Digest]) -> dict[Digest, list[Digest]]:
        """A batch of keys per query: a no-op rerun looks up every action of its plan. A store recorded before
        keys had one result may hold several for a key: the newest answers (SQLite takes the bare column from
        the row that holds the MAX)."""
        found: dict[Digest, list[Digest]] = {}
        named = {str(key): key for key in keys}
        names = list(named)
        for start in range(0, len(names), _BATCH):
            batch = names[start : start + _BATCH]
            query = f"SELECT key, result, MAX(recorded) FROM action_results WHERE key IN {_marks(batch)} GROUP BY key"
            for key, result, _ in self._execute(query, batch):
                found[named[key]] = [Digest(result)]
        return found

    def producers(self, output: Digest) -> list[Digest]:
        rows = self._execute("SELECT result FROM produced WHERE output = ?", (str(output),)).fetchall()
        return [Digest(result) for (result,) in rows]

    def results_since(self, since: float) -> list[Digest]:
        rows = self._execute(
            "SELECT result FROM action_results WHERE recorded >= ? ORDER BY recorded", (since,)
        ).fetchall()
        return [Digest(result) for (result,) in rows]

    # -- claims ------------------------------------------------------------------------------------

    def claimant(self, key: Digest) -> bytes | None:
        row = self._execute("SELECT holder FROM claims WHERE key = ?", (str(key),)).fetchone()
        return None if row is None else bytes(row[0])

    def swap_claim(self, key: Digest, expected: bytes | None, new: bytes | None) -> bool:
        # One statement each way, so the comparison and the write are one atomic step for SQLite.
        if expected is None and new is None:
            return self.claimant(key) is None
        if expected is None:
            cursor = self._execute(
                "INSERT INTO claims (key, holder) VALUES (?, ?) ON CONFLICT(key) DO NOTHING", (str(key), new)
            )
        elif new is None:
            cursor = self._execute("DELETE FROM claims WHERE key = ? AND holder = ?", (str(key), expected))
        else:
            cursor = self._execute(
                "UPDATE claims SET holder = ? WHERE key = ? AND holder = ?", (new, str(key), expected)
            )
        return cursor.rowcount == 1


def _marks(values: Sized) -> str:
    """The parameter list ``(?, ?, ...)`` for ``values``."""
    return f"({', '.join('?' * len(values))})"
