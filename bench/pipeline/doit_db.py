"""doit's dependency database as the pipeline uses it: disposable, so keeping it never fails a run.

The store's action cache decides what runs; doit's database only saves it asking (see ``doit_tasks.py``). doit's own
SQLite backend raises when its file cannot be opened (damaged) or written at the end of a run (a full disk), and doit
then prints a traceback over the run's own one-line error. This backend says in one line that the database was not
kept and carries on: a damaged file is replaced by a new one, and a database that cannot be saved is dropped (the next
run asks the action cache, as after a lost database). ``python -m bench.run.dodo`` installs it under doit's own name,
``sqlite3``.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
from typing import Any

from doit.dependency import DatabaseException, SqliteDB

__all__ = ["DOIT_BACKENDS", "DisposableSqliteDB"]


class DisposableSqliteDB(SqliteDB):  # type: ignore[misc]  # doit is untyped
    desc = "sqlite3, disposable: a database that cannot be opened or saved is replaced, never a failed run"

    def __init__(self, name: str, codec: Any, *, module_name: str | None = None) -> None:
        try:
            super().__init__(name, codec, module_name=module_name)
        except (DatabaseException, sqlite3.Error) as exc:
            _note(f"doit's database {name} cannot be opened ({_first_line(exc)}); a new one replaces it")
            for suffix in ("", "-journal", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name + suffix)
            try:
                super().__init__(name, codec, module_name=module_name)
            except (DatabaseException, sqlite3.Error):
                super().__init__(":memory:", codec, module_name=module_name)  # this run only

    def dump(self) -> None:
        try:
            super().dump()
        except sqlite3.Error as exc:
            self._dropped(exc)

    def remove(self, task_id: str) -> None:
        try:
            super().remove(task_id)
        except sqlite3.Error as exc:  # an entry left behind is harmless: the action cache decides, not doit
            self._dropped(exc)

    def _dropped(self, exc: sqlite3.Error) -> None:
        if not getattr(self, "_said", False):
            self._said = True
            _note(f"doit's database {self.name} was not saved ({exc}); the next run asks the store's action cache")
        connection: sqlite3.Connection = getattr(self, "_conn")  # noqa: B009  # set by doit's untyped class
        with contextlib.suppress(sqlite3.Error):
            connection.close()
        self._conn = _closed(self.codec)


def _closed(codec: Any) -> sqlite3.Connection:
    """An empty database in memory in place of one that failed, so the rest of the run writes nowhere and fails
    nowhere."""
    return SqliteDB(":memory:", codec)._conn  # type: ignore[no-any-return]


# doit's plugin configuration: its own backend name, so `--backend`, DOIT_CONFIG and the database file stay as they are.
DOIT_BACKENDS = {"BACKEND": {"sqlite3": f"{__name__}:DisposableSqliteDB"}}


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _note(text: str) -> None:
    print(f"note: {text}", file=sys.stderr, flush=True)
