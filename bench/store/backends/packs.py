"""Pack files: many objects' bytes appended to one file, found again by (pack name, offset, size).

A bulk write (``put_many``: a tree's files) appends its objects to the pack its transaction owns instead of
giving each object a row of its own. The bytes are then written once (a row is written twice, to the WAL and
again at the checkpoint) and the index holds only where they are. A pack belongs to one transaction: it is
created by the transaction's first bulk write, synced before the transaction commits, and removed if the
transaction rolls back; a savepoint that rolls back truncates it to where the savepoint began. After commit a
pack never changes, so it is read with ``pread`` from any thread or process.

A pack file with no row naming it is a write that was never recorded (a killed writer's): invisible, and removed
by the store's sweep once it is older than the sweep's cutoff.

A pack shorter than its rows say is damaged: its objects come back cut short, and fail their hash where the
store re-hashes them (corrupt, never missing). An ``OSError`` leaves here naming its pack file (a call on a
descriptor names none), for the backend's boundary (``sqlite_errors.py``) to translate.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["PackReader", "PackWriter", "naming", "pack_names"]

_SUFFIX = ".pack"
_IOV_MAX = 1024  # buffers one pwritev may take (Linux's IOV_MAX)
_GAP = 4096  # bytes of other objects a read may skip over to stay one pread
_RUN = 1 << 20  # bytes one pread may read at most; 4 MiB held 11 MB more at certify's peak for no gain in time


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
        with naming(self.path):
            _write_all(self._descriptor, list(datas), offsets[0] if offsets else self.size)
        return offsets

    def truncate(self, size: int) -> None:
        """Drop what was appended after ``size`` bytes (a savepoint rolled back)."""
        with naming(self.path):
            os.ftruncate(self._descriptor, size)
        self.size = size

    def seal(self) -> None:
        """Sync the bytes, so no committed row can outlive them; an empty pack is removed."""
        if self.size:
            with naming(self.path):
                os.fdatasync(self._descriptor)
        os.close(self._descriptor)
        if not self.size:
            self.path.unlink()

    def discard(self) -> None:
        """Close and remove the pack: its transaction rolled back, so no row names it."""
        os.close(self._descriptor)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


@contextlib.contextmanager
def naming(path: Path | str) -> Iterator[None]:
    """An ``OSError`` from a call on a file's descriptor (a pack's, a loose object's), naming the file."""
    try:
        yield
    except OSError as exc:
        exc.filename = exc.filename or str(path)
        raise


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
    never closed under another thread's read. Objects that lie next to each other in a pack (a tree's files,
    asked for in the order they were written) are read with one ``pread`` per run.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = str(directory)
        self._open: dict[str, int | None] = {}
        # Runs of several objects are read into this one buffer and copied out object by object, so a reader
        # holds one run's bytes twice at most, not a fresh allocation per run.
        self._buffer = bytearray()

    def __enter__(self) -> PackReader:
        return self

    def __exit__(self, *exc: object) -> None:
        for descriptor in self._open.values():
            if descriptor is not None:
                os.close(descriptor)
        self._open.clear()

    def read(self, name: str, offset: int, size: int) -> bytes | None:
        """The ``size`` bytes at ``offset`` of pack ``name``; None when the pack is gone, fewer bytes when it was
        cut short."""
        return self.read_many([(name, offset, size)])[0]

    def read_many(self, wanted: Sequence[tuple[str, int, int]]) -> list[bytes | None]:
        """The bytes of each ``(pack, offset, size)`` in ``wanted``, in order; None for those whose pack is gone."""
        found: list[bytes | None] = [None] * len(wanted)
        for run in self.read_runs(wanted):
            for index, data in run:
                found[index] = data
        return found

    def read_runs(self, wanted: Sequence[tuple[str, int, int]]) -> Iterator[list[tuple[int, bytes | None]]]:
        """``(index into wanted, bytes)`` of each ``(pack, offset, size)``, in pack order, a list per ``pread`` of
        neighbours (at most ``_RUN`` bytes, so what is held at once stays bounded however long ``wanted`` is)."""
        run: list[int] = []
        for index in sorted(range(len(wanted)), key=wanted.__getitem__):
            if run and not self._extends(wanted[run[0]], wanted[run[-1]], wanted[index]):
                yield self._read_run(wanted, run)
                run = []
            run.append(index)
        if run:
            yield self._read_run(wanted, run)

    @staticmethod
    def _extends(first: tuple[str, int, int], last: tuple[str, int, int], following: tuple[str, int, int]) -> bool:
        """Whether ``following`` is read in the same ``pread`` as the run from ``first`` to ``last``."""
        name, offset, size = following
        gap = offset - (last[1] + last[2])
        return name == first[0] and 0 <= gap <= _GAP and offset + size - first[1] <= _RUN

    def _read_run(self, wanted: Sequence[tuple[str, int, int]], run: list[int]) -> list[tuple[int, bytes | None]]:
        name, start, _ = wanted[run[0]]
        descriptor = self._descriptor(name)
        if descriptor is None:
            return [(index, None) for index in run]
        if len(run) == 1:
            _, offset, size = wanted[run[0]]
            with naming(f"{self.directory}/{name}{_SUFFIX}"):
                return [(run[0], os.pread(descriptor, size, offset))]  # short if the pack was cut: it fails its hash
        length = max(wanted[index][1] + wanted[index][2] for index in run) - start
        if len(self._buffer) < length:
            self._buffer = bytearray(length)
        found: list[tuple[int, bytes | None]] = []
        with memoryview(self._buffer) as view:
            with naming(f"{self.directory}/{name}{_SUFFIX}"):
                got = os.preadv(descriptor, [view[:length]], start)
            for index in run:
                _, offset, size = wanted[index]
                at = offset - start
                found.append((index, bytes(view[at : min(at + size, got)])))  # cut short with the pack
        return found

    def _descriptor(self, name: str) -> int | None:
        if name not in self._open:
            try:
                self._open[name] = os.open(f"{self.directory}/{name}{_SUFFIX}", os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:
                self._open[name] = None
        return self._open[name]
