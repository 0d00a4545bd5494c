"""The sqlite3 boundary: every error SQLite raises leaves the backend as a store error naming the index file.

A damaged ``index.sqlite`` ("file is not a database", "database disk image is malformed") is
:class:`~bench.errors.StoreCorrupt` (exit 3, as ``store fsck`` reports corruption); any other SQLite failure
(a lock held too long, a read-only file, a full disk) is a :class:`~bench.errors.StoreError`. Applied to the
backend class as a whole, so a method added later is covered without anyone remembering to wrap it.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from ...errors import StoreCorrupt, StoreError

__all__ = ["translate_sqlite_errors"]

C = TypeVar("C", bound=type)
_DAMAGE = ("malformed", "not a database", "corrupt")


def _translated(backend: Any, exc: sqlite3.Error) -> StoreError:
    where = Path(getattr(backend, "root", ".")) / "index.sqlite"
    damaged = type(exc) is sqlite3.DatabaseError or any(word in str(exc) for word in _DAMAGE)
    if damaged:
        return StoreCorrupt(str(where), str(exc))
    return StoreError(f"the store index {where} cannot be used: {exc}", path=str(where))


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
            except sqlite3.Error as exc:
                raise _translated(self, exc) from exc

        return generator

    @functools.wraps(function)
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return function(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise _translated(self, exc) from exc

    return method


@contextlib.contextmanager
def _guarded(backend: Any, manager: contextlib.AbstractContextManager[Any]) -> Iterator[Any]:
    try:
        with manager as value:
            yield value
    except sqlite3.Error as exc:
        raise _translated(backend, exc) from exc


def translate_sqlite_errors(cls: C) -> C:
    """Wrap ``__init__`` and every public method of ``cls`` in the boundary."""
    for name, member in list(vars(cls).items()):
        if inspect.isfunction(member) and (name == "__init__" or not name.startswith("_")):
            setattr(cls, name, _wrap(member))
    return cls
