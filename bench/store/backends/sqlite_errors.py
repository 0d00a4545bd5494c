"""The backend's boundary: every error SQLite raises leaves it as a store error naming the index file, and every
``OSError`` from the files beside the index (packs, loose objects) as one naming that file.

A damaged ``index.sqlite`` ("file is not a database", "database disk image is malformed") is
:class:`~bench.errors.StoreCorrupt` (exit 3, as ``store fsck`` reports corruption); a full disk or a permission
the system refused is :class:`~bench.errors.SystemRefused` (exit 74, as for any file), naming the file being
written (the index, a pack, a loose object's temporary); any other SQLite failure (a lock held too long) is a
:class:`~bench.errors.StoreError`. A pack or loose file that is not what the store wrote (a directory in its
place, an I/O error reading it) is corrupt too. (A pack cut short or altered reads
back as bytes that fail their hash: the store refuses them as :class:`~bench.errors.ObjectCorrupt`.) Applied to
the backend class as a whole, so a method added later is covered without anyone remembering to wrap it.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import inspect
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from ...errors import REFUSED_BY_SYSTEM, StoreCorrupt, StoreError, SystemRefused

__all__ = ["translate_sqlite_errors"]

C = TypeVar("C", bound=type)
_DAMAGE = ("malformed", "not a database", "corrupt")
# What reading a store file answers when the file is not what the store wrote there.
_DAMAGED_FILE = {errno.EIO, errno.EISDIR, errno.ENOTDIR, errno.EUCLEAN, errno.EBADMSG}
_ERRORS = (sqlite3.Error, OSError)
_SQLITE_REFUSED = {13: errno.ENOSPC, 8: errno.EACCES}  # SQLITE_FULL, SQLITE_READONLY (the file's permissions)


def _translated(backend: Any, exc: sqlite3.Error | OSError) -> StoreError | SystemRefused:
    root = Path(getattr(backend, "root", "."))
    if isinstance(exc, OSError):
        where = str(exc.filename or root)
        if exc.errno in REFUSED_BY_SYSTEM:
            return SystemRefused.of(exc, where)
        if exc.errno in _DAMAGED_FILE:
            return StoreCorrupt(where, exc.strerror or str(exc), what="file")
        return StoreError(
            f"the store file {where} cannot be used: {exc.strerror or exc}",
            path=where,
            hint="check the free space and the permissions of the store directory",
        )
    where = str(root / "index.sqlite")
    refused = _SQLITE_REFUSED.get(getattr(exc, "sqlite_errorcode", 0) & 0xFF)
    if refused is not None:
        return SystemRefused.of(OSError(refused, os.strerror(refused)), where)  # SQLite says "database or disk"
    damaged = type(exc) is sqlite3.DatabaseError or any(word in str(exc) for word in _DAMAGE)
    if damaged:
        return StoreCorrupt(where, str(exc))
    return StoreError(f"the store index {where} cannot be used: {exc}", path=where)


def _wrap(function: Callable[..., Any]) -> Callable[..., Any]:
    # try/except rather than a context manager: a put is called thousands of times a tree, and a try costs nothing.
    if function.__name__ == "transaction":  # its BEGIN and COMMIT run later, when the block is entered and left

        @functools.wraps(function)
        def transaction(self: Any, *args: Any, **kwargs: Any) -> Any:
            return _guarded(self, function(self, *args, **kwargs))

        return transaction
    if inspect.isgeneratorfunction(function):

        @functools.wraps(function)
        def generator(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                yield from function(self, *args, **kwargs)
            except _ERRORS as exc:
                raise _translated(self, exc) from exc

        return generator

    @functools.wraps(function)
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return function(self, *args, **kwargs)
        except _ERRORS as exc:
            raise _translated(self, exc) from exc

    return method


@contextlib.contextmanager
def _guarded(backend: Any, manager: contextlib.AbstractContextManager[Any]) -> Iterator[Any]:
    inside: BaseException | None = None
    try:
        with manager as value:
            try:
                yield value
            except BaseException as exc:
                inside = exc
                raise
    except _ERRORS as exc:
        if exc is inside and isinstance(exc, OSError):
            raise  # the block's own: a file it read that is no store file (a tree's source), not the store's
        raise _translated(backend, exc) from exc


def translate_sqlite_errors(cls: C) -> C:
    """Wrap ``__init__`` and every public method of ``cls`` in the boundary."""
    for name, member in list(vars(cls).items()):
        if inspect.isfunction(member) and (name == "__init__" or not name.startswith("_")):
            setattr(cls, name, _wrap(member))
    return cls
