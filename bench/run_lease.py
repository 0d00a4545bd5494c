"""The project's run lease: one `demo` or `run` at a time in a project.

Two runs of one project would each run every pair the other runs (paying twice), race to export the same
published bundle and record a run each. So a run holds the project's lease from its first check to its last
line: an exclusive ``flock`` of ``<project>/.run-lease``, which names its holder (pid, host, when it started and
the command) for whoever finds it taken. A second run waits for it, saying once whom for, or with ``--no-wait``
is refused in one line naming the holder. The kernel drops the lock with its holder's process, so a killed run's
lease is taken over by the next run at once, whatever its file still says.

The lease is per project directory; two projects sharing one store (a bucket) are kept apart per action by the
store's claims (:mod:`bench.store.claims`) instead.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from .contracts.strict_json import parse_json_object
from .errors import StoreError
from .processes import ProcessIdentity
from .project import Project

__all__ = ["LEASE_FILE", "LeaseHolder", "RunLeaseHeld", "run_lease"]

LEASE_FILE = ".run-lease"
_READS = 20  # a holder names itself right after it locks: a reader between the two tries again, this often


@dataclass(frozen=True)
class LeaseHolder:
    pid: int
    host: str
    started: float  # time.time() when it took the lease
    command: str

    def describe(self) -> str:
        when = datetime.fromtimestamp(self.started, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        return f"pid {self.pid} on {self.host}, started {when} (`{self.command}`)"


class RunLeaseHeld(StoreError):
    """Another run holds the project's run lease; ``holder`` names it (None: it had not named itself yet)."""

    def __init__(self, path: Path, holder: LeaseHolder | None) -> None:
        named = holder.describe() if holder is not None else "a run that is starting"
        super().__init__(
            f"another run holds this project: {named}",
            path=str(path),
            hint="wait for it to finish (run again without --no-wait to wait), or stop it",
        )
        self.holder = None if holder is None else asdict(holder)


def _holder(handle: int) -> LeaseHolder | None:
    """Who the lease file names, read through the open ``handle``."""
    for _ in range(_READS):
        data = os.pread(handle, 4096, 0)
        try:
            return LeaseHolder(**parse_json_object(data, "the run lease"))
        except (ValueError, TypeError):
            time.sleep(0.05)  # being written (or empty: its holder is just starting)
    return None


@contextlib.contextmanager
def run_lease(project: Project, command: str, wait: bool, say: Callable[[str], None]) -> Iterator[LeaseHolder]:
    """Hold the project's run lease for the block; ``say`` tells the one line of a wait."""
    path = project.root / LEASE_FILE
    try:
        handle = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise StoreError(f"cannot open the run lease {path}: {exc.strerror}", path=str(path)) from exc
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(handle)
            if not wait:
                raise RunLeaseHeld(path, holder) from None
            named = holder.describe() if holder is not None else "a run that is starting"
            say(f"waiting for the run that holds this project: {named}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        me = ProcessIdentity.current()
        mine = LeaseHolder(pid=me.pid, host=me.host, started=time.time(), command=command)
        data = json.dumps(asdict(mine)).encode()
        os.pwrite(handle, data, 0)
        os.ftruncate(handle, len(data))
        try:
            yield mine
        finally:
            os.ftruncate(handle, 0)  # a lease nobody holds names nobody
    finally:
        os.close(handle)
