"""Files named from outside: read once, checked to be what was asked for, with a bound; written only where a file
can be written without waiting.

A path named on the command line or inside a suite can be anything: a FIFO (opening it waits for a writer, reading
it for the writer to go), a device (``/dev/zero`` reads for ever), a symlink loop, a directory, or a file far larger
than any document. Each is refused here naming the path, before a byte is used. The file is opened once without
blocking (``O_NONBLOCK``: a FIFO opens at once, and a terminal is not made the controlling one), checked on that
descriptor to be a regular file, so what was checked is what is read, and read up to its bound: a file that grows
past it while being read is refused too.

Writing to a path a user named (an output file, a project's marker) opens it without blocking too: a FIFO nobody
reads would otherwise hold the command for ever; a device such as ``/dev/null`` and a FIFO with a reader take the
bytes, a directory or a symlink loop is refused.

The refusal is the caller's family: a document's reader refuses with :class:`~bench.errors.ContractError` (exit 6),
an outside input's with :class:`~bench.errors.SourceError` (exit 9).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from ..errors import BenchError, ContractError

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "checked_directory",
    "describe",
    "kind_of",
    "opened_regular",
    "read_bounded",
    "resolved",
    "write_checked",
]

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024  # no document this package reads comes near it; a manifest of 1e5 files is 20 MB
_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
_CHUNK = 1 << 20

Refusal = Callable[..., BenchError]  # an error class of the tree: (message, *, path=..., hint=...)


def kind_of(mode: int) -> str:
    """What a file of ``mode`` is, as a refusal names it."""
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symlink"),
        (stat.S_ISREG, "a regular file"),
    )
    return next((name for test, name in kinds if test(mode)), "not a file")


def describe(path: Path) -> str:
    """What is at ``path``, for a refusal: "a FIFO", "a symlink loop", "nothing" ..."""
    try:
        return kind_of(os.stat(path).st_mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symlink loop"
        return "nothing" if exc.errno in (errno.ENOENT, errno.ENOTDIR) else f"unreadable ({exc.strerror})"


def _unreadable(path: Path, what: str, exc: OSError, error: Refusal, hint: str | None) -> BenchError:
    if exc.errno == errno.ELOOP:
        return error(f"{what} {path} is a symlink loop; point it at a file", path=str(path), hint=hint)
    return error(f"cannot read {what} {path}: {exc.strerror or exc}", path=str(path), hint=hint)


@contextmanager
def opened_regular(
    path: Path, what: str, *, error: Refusal = ContractError, hint: str | None = None
) -> Iterator[BinaryIO]:
    """``path`` open for reading, refused unless it is a regular file (a symlink to one is one)."""
    try:
        descriptor = os.open(path, _FLAGS)
    except OSError as exc:
        raise _unreadable(path, what, exc, error, hint) from None
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise error(f"{what} {path} is {kind_of(mode)}, not a regular file", path=str(path), hint=hint)
        os.set_blocking(descriptor, True)
        handle = os.fdopen(descriptor, "rb", buffering=0)
    except BaseException:
        os.close(descriptor)
        raise
    with handle:
        yield handle


def read_bounded(
    path: Path,
    what: str,
    *,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    error: Refusal = ContractError,
    hint: str | None = None,
) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` of them; anything else is refused naming it."""
    with opened_regular(path, what, error=error, hint=hint) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > max_bytes:
            raise error(f"{what} {path} is {size} bytes, over the {max_bytes}-byte limit", path=str(path), hint=hint)
        chunks: list[bytes] = []
        total = 0
        try:
            while chunk := handle.read(min(_CHUNK, max_bytes + 1 - total)):
                chunks.append(chunk)
                total += len(chunk)
                if total > max_bytes:  # it grew while being read
                    raise error(f"{what} {path} grew past the {max_bytes}-byte limit", path=str(path), hint=hint)
        except OSError as exc:
            raise _unreadable(path, what, exc, error, hint) from None
        return b"".join(chunks)


def resolved(path: Path, what: str, *, error: Refusal = ContractError) -> Path:
    """``path`` made absolute with its symlinks resolved; a symlink loop is refused naming it (Python 3.11 raises
    RuntimeError for one, later versions OSError)."""
    try:
        return path.expanduser().resolve()
    except (RuntimeError, OSError) as exc:
        problem = "is a symlink loop" if isinstance(exc, RuntimeError) or _is_loop(exc) else "cannot be resolved"
        raise error(f"{what} {path} {problem}", path=str(path)) from None


def _is_loop(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno == errno.ELOOP


def checked_directory(path: Path, what: str, *, error: Refusal = ContractError) -> Path:
    """``path``, refused unless it is a directory (a symlink to one is one), naming what it is instead."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(f"{what} {path} is a symlink loop; point it at a directory", path=str(path)) from None
        raise error(f"{what} {path} cannot be read: {exc.strerror or exc}", path=str(path)) from None
    if not stat.S_ISDIR(mode):
        raise error(f"{what} {path} is {kind_of(mode)}, not a directory", path=str(path))
    return path


def write_checked(path: Path, data: bytes, what: str, *, error: Refusal = ContractError) -> None:
    """Write ``data`` to ``path`` (created, or truncated if it is a regular file), refusing a FIFO with no reader,
    a directory and a symlink loop by name instead of waiting or failing half-way."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY, 0o644)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise error(f"{what} {path} is a FIFO nobody reads; remove it or read it", path=str(path)) from None
        if exc.errno in (errno.ELOOP, errno.EISDIR):
            raise error(f"{what} {path} is {describe(path)}, not a file to write", path=str(path)) from None
        raise
    with os.fdopen(descriptor, "wb") as handle:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISREG(mode):
            os.ftruncate(descriptor, 0)
        os.set_blocking(descriptor, True)
        handle.write(data)
