"""File digests remembered on this machine, so a plan does not re-read a 200 MB binary and an npm tree each time.

Every plan (``status`` and the no-op ``run`` too) pins the image inputs, and those are digests of files on the host:
the coding agent's binary and each layer's fetched packages. A digest is remembered under the machine's cache
(:func:`~bench.machine_cache.cache_root`), keyed by the file's path and every stat field a change of its content
moves: device, inode, size, modification and status-change times in nanoseconds. The status-change time is set by
the kernel on every write, rename onto the path and ``utime`` call, and cannot be set back, so a file rewritten to
the same size with its old modification time restored still misses.

It fails closed: a stat that differs after reading (written meanwhile), a file changed within the last
:data:`RACY_SECONDS` (a later write in the same clock tick would keep every field: git's "racy" entries), a
database that cannot be opened or read: each gives a fresh read, never a remembered answer. Nothing here is a
result: deleting the cache costs time only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from .machine_cache import cache_root

__all__ = ["RACY_SECONDS", "FileDigests", "file_digests"]

RACY_SECONDS = 2.0
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS digests (path TEXT PRIMARY KEY, dev INTEGER, ino INTEGER, size INTEGER, "
    "mtime_ns INTEGER, ctime_ns INTEGER, sha256 TEXT)"
)

_Stamp = tuple[int, int, int, int, int]


def _stamp(stat: os.stat_result) -> _Stamp:
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def _sha256(path: Path) -> str:
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


class FileDigests:
    """SHA-256 of regular files, remembered by path and stat (see the module docstring); ``database`` None: none
    remembered (the cache could not be opened), every file read. New digests are written when the block of
    :func:`file_digests` ends, in one transaction."""

    def __init__(self, database: sqlite3.Connection | None) -> None:
        self._database = database
        self._new: list[tuple[str, int, int, int, int, int, str]] = []
        self._loaded: dict[str, tuple[object, ...]] = {}

    def sha256(self, path: Path | str, stat: os.stat_result | None = None) -> str:
        """The hex SHA-256 of the file at ``path`` (symbolic links followed, as reading it does); ``stat``: its
        stat, when the caller has just taken it. Remembered under the absolute path: the device and inode in the
        stamp say which file it is, the path only where to look."""
        return self.sha256_at(os.path.abspath(path), stat)

    def sha256_at(self, location: str, stat: os.stat_result | None = None) -> str:
        """:meth:`sha256` of ``location``, already an absolute normal path (an entry of a directory listed by its
        absolute path): a walk of thousands of files spent a fifth of its time making its paths absolute again."""
        before = os.stat(location) if stat is None else stat
        stamp = _stamp(before)
        remembered = self._lookup(location, stamp)
        if remembered is not None:
            return remembered
        digest = _sha256(Path(location))
        settled = time.time_ns() - max(before.st_mtime_ns, before.st_ctime_ns) > RACY_SECONDS * 1e9
        if settled and _stamp(os.stat(location)) == stamp:
            self._new.append((location, *stamp, digest))
        return digest

    def preload(self, directory: Path | str) -> None:
        """Read what is remembered of every file below ``directory`` in one query (a tree of thousands of files
        asked one at a time spent most of its time in the queries)."""
        if self._database is None:
            return
        below = os.path.join(os.path.abspath(directory), "")
        try:
            rows = self._database.execute(
                "SELECT path, dev, ino, size, mtime_ns, ctime_ns, sha256 FROM digests WHERE path >= ? AND path < ?",
                (below, below[:-1] + chr(ord(os.sep) + 1)),
            ).fetchall()
        except sqlite3.Error:
            return
        self._loaded.update((row[0], tuple(row[1:])) for row in rows)

    def _lookup(self, location: str, stamp: _Stamp) -> str | None:
        row = self._loaded.get(location)
        if row is None and self._database is not None:
            with contextlib.suppress(sqlite3.Error):
                row = self._database.execute(
                    "SELECT dev, ino, size, mtime_ns, ctime_ns, sha256 FROM digests WHERE path = ?", (location,)
                ).fetchone()
        if row is None or row[:5] != stamp or not isinstance(row[5], str) or len(row[5]) != 64:
            return None
        return str(row[5])

    def flush(self) -> None:
        """Remember the digests read since the last flush (a failure forgets them: they are read again)."""
        if self._database is None or not self._new:
            return
        with contextlib.suppress(sqlite3.Error), self._database:
            self._database.executemany("INSERT OR REPLACE INTO digests VALUES (?, ?, ?, ?, ?, ?, ?)", self._new)
        self._new.clear()


def _open(path: Path) -> sqlite3.Connection | None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        database = sqlite3.connect(path, timeout=10)
        database.execute(_SCHEMA)
        return database
    except (OSError, sqlite3.Error):
        return None


@contextlib.contextmanager
def file_digests() -> Iterator[FileDigests]:
    """The machine's remembered file digests, for as long as the block runs."""
    database = _open(cache_root() / "file-digests.sqlite")
    try:
        digests = FileDigests(database)
        yield digests
        digests.flush()
    finally:
        if database is not None:
            database.close()
