"""Pack files: many objects' bytes appended to one file, found again by (pack name, offset, size).

A bulk write (``put_many``: a tree's files) appends its objects to the pack its transaction owns instead of
giving each object a row of its own. The bytes are then written once (a row is written twice, to the WAL and
again at the checkpoint) and the index holds only where they are. A pack belongs to one transaction: it is
created by the transaction's first bulk write, synced before the transaction commits, and removed if the
transaction rolls back; a savepoint that rolls back truncates it to where the savepoint began. After commit a
pack never changes, so it is read with ``pread`` from any thread or process.

A pack file with no row naming it is a write that was never recorded (a killed writer's): invisible, and removed
by the store's sweep once it is older than the sweep's cutoff.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["PackReader", "PackWriter", "pack_names"]

_SUFFIX = ".pack"
_IOV_MAX = 1024  # buffers one pwritev may take (Linux's IOV_MAX)


def pack_names(directory: Path) -> list[str]:
    """The names of the pack files in ``directory``."""
    return [entry.name.removesuffix(_SUFFIX) for entry in os.scandir(directory) if entry.name.endswith(_SUFFIX)]


def pack_path(directory: Path, name: str) -> Path:
    return directory / f"{name}{_SUFFIX}"


class PackWriter:
    """The pack of one transaction, appended to a batch at a time and synced before its rows commit."""

    def __init__(self, directory: Path) -> None:
        self.name = os.urandom(10).hex()
        self.path = pack_path(directory, self.name)
        self._descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        self.size = 0

    def append(self, datas: Sequence[bytes]) -> list[int]:
        """Append every item of ``datas``, in one system call for up to IOV_MAX of them; their offsets."""
        offsets = []
        for data in datas:
            offsets.append(self.size)
            self.size += len(data)
        _write_all(self._descriptor, list(datas), offsets[0] if offsets else self.size)
        return offsets

    def truncate(self, size: int) -> None:
        """Drop what was appended after ``size`` bytes (a savepoint rolled back)."""
        os.ftruncate(self._descriptor, size)
        self.size = size

    def seal(self) -> None:
        """Sync the bytes, so no committed row can outlive them; an empty pack is removed."""
        if self.size:
            os.fdatasync(self._descriptor)
        os.close(self._descriptor)
        if not self.size:
            self.path.unlink()

    def discard(self) -> None:
        """Close and remove the pack: its transaction rolled back, so no row names it."""
        os.close(self._descriptor)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def _write_all(descriptor: int, buffers: list[bytes], offset: int) -> None:
    """Write ``buffers`` back to back at ``offset``, however short each ``pwritev`` comes back."""
    views: list[bytes | memoryview] = list(buffers)
    first = 0
    while first < len(views):
        written = os.pwritev(descriptor, views[first : first + _IOV_MAX], offset)
        offset += written
        while first < len(views) and written >= len(views[first]):
            written -= len(views[first])
            first += 1
        if written:
            views[first] = memoryview(views[first])[written:]


class PackReader:
    """Reads objects out of sealed packs for one batch of reads, opening each pack once; close it after.

    ``pread`` needs no shared file position, and a reader is never shared between threads, so a descriptor is
    never closed under another thread's read.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._open: dict[str, int | None] = {}

    def __enter__(self) -> PackReader:
        return self

    def __exit__(self, *exc: object) -> None:
        for descriptor in self._open.values():
            if descriptor is not None:
                os.close(descriptor)
        self._open.clear()

    def read(self, name: str, offset: int, size: int) -> bytes | None:
        """The ``size`` bytes at ``offset`` of pack ``name``; None when the pack or the bytes are gone."""
        if name not in self._open:
            try:
                self._open[name] = os.open(pack_path(self.directory, name), os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:
                self._open[name] = None
        descriptor = self._open[name]
        if descriptor is None:
            return None
        data = os.pread(descriptor, size, offset)
        return data if len(data) == size else None
