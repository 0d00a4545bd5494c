"""Leases: which sandbox resources belong to a live runner, so a sweep removes only what a dead one left.

Every container, network (Docker) or root (process backend) a runner makes carries two labels: :data:`OWNER_LABEL`,
the runner's identity, and :data:`LEASE_LABEL`, where its lease is (``<site>:<path>``). The lease is a small JSON
file naming the runner's process (pid, start time, pid namespace) and its time to live; a daemon thread renews
its mtime every ``heartbeat`` seconds from the first resource on, and it is removed when the process exits (a
killed runner's is removed by the next sweep).

A sweep judges each resource by its labels (:meth:`Lease.standing`):

- ``OWN``: the sweeping runner's own; never removed by it.
- ``FOREIGN``: no lease label (an older runner), or a lease on another site (another machine, container or mount
  namespace, whose files cannot be read from here): left alone, since its liveness cannot be judged.
- ``DEAD``: the lease file is gone, was not renewed within its time to live, or names a process (visible from
  here) that is gone: removed.
- ``LIVE``: anything else: left alone.

So a sweep beside a live run, a second run or a parallel worker on the same engine touches none of their arms.
"""

from __future__ import annotations

import atexit
import contextlib
import enum
import json
import multiprocessing.util
import os
import secrets
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from ...processes import boot_id, namespace, process_start

__all__ = ["HEARTBEAT", "LEASE_LABEL", "LEASE_TTL", "OWNER_LABEL", "Lease", "Standing", "default_lease_dir"]

OWNER_LABEL = "sandbox.owner"
LEASE_LABEL = "sandbox.lease"
HEARTBEAT = 10.0  # seconds between renewals
LEASE_TTL = 90.0  # a lease not renewed for this long is dead, whatever its process


class Standing(enum.StrEnum):
    OWN = "own"
    LIVE = "live"
    DEAD = "dead"
    FOREIGN = "foreign"


def default_lease_dir() -> Path:
    """Where leases live: $SANDBOX_LEASE_DIR, or one directory under the system temp directory shared by all."""
    return Path(os.environ.get("SANDBOX_LEASE_DIR") or Path(tempfile.gettempdir()) / "sandbox-leases")


def site() -> str:
    """This machine boot and mount namespace: processes on one site see the same lease files."""
    return f"{boot_id()}.{namespace('mnt')}"


class Lease:
    """One runner's claim on what it labels; see the module docstring."""

    _current: ClassVar[tuple[int, Lease] | None] = None
    _current_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, directory: Path | None = None, *, ttl: float = LEASE_TTL, heartbeat: float = HEARTBEAT) -> None:
        if heartbeat >= ttl:
            raise ValueError(f"a lease renewed every {heartbeat}s with a {ttl}s time to live would lapse while held")
        self.owner = secrets.token_hex(8)
        self.directory = directory or default_lease_dir()
        self.path = self.directory / f"{self.owner}.json"
        self.ttl = ttl
        self.heartbeat = heartbeat
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    @classmethod
    def current(cls) -> Lease:
        """This process's lease, shared by every backend it makes (a forked worker gets its own)."""
        with cls._current_lock:
            if cls._current is None or cls._current[0] != os.getpid():
                cls._current = (os.getpid(), Lease())
            return cls._current[1]

    def labels(self) -> dict[str, str]:
        """The labels of a resource made now; holds the lease from here on."""
        self.hold()
        return {OWNER_LABEL: self.owner, LEASE_LABEL: f"{site()}:{self.path}"}

    def hold(self) -> None:
        """Write the lease file and keep renewing it (idempotent)."""
        with self._lock:
            if self._renewer is not None and self._renewer.is_alive():
                return
            self._write()
            self._stop.clear()
            self._renewer = threading.Thread(target=self._renew, name=f"lease-{self.owner}", daemon=True)
            self._renewer.start()
            atexit.register(self.release)
            # A multiprocessing worker (doit -n N) leaves through os._exit, past atexit: release there too.
            multiprocessing.util.Finalize(self, self.release, exitpriority=10)

    def release(self) -> None:
        """Stop renewing and remove the lease file: whatever still carries this owner is judged dead."""
        with self._lock:
            self._stop.set()
            if self._renewer is not None:
                self._renewer.join()
                self._renewer = None
            self.path.unlink(missing_ok=True)

    def _write(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):  # shared by every user of the machine, like /tmp
            self.directory.chmod(0o1777)
        record = {
            "owner": self.owner,
            "pid": os.getpid(),
            "started": process_start(os.getpid()),
            "pid_namespace": namespace("pid"),
            "ttl": self.ttl,
        }
        partial = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}")
        partial.write_text(json.dumps(record))
        partial.replace(self.path)

    def _renew(self) -> None:
        while not self._stop.wait(self.heartbeat):
            try:
                os.utime(self.path)
            except FileNotFoundError:
                with contextlib.suppress(OSError):
                    self._write()  # someone removed the directory: claim it again
            except OSError:
                pass  # try again at the next beat; the time to live is several beats

    # -- judging others ------------------------------------------------------------------------------

    def standing(self, labels: Mapping[str, str]) -> Standing:
        """How a resource carrying ``labels`` stands for a sweep by this runner."""
        owner = labels.get(OWNER_LABEL)
        if owner == self.owner:
            return Standing.OWN
        path = self._lease_path(labels)
        if path is None:
            return Standing.FOREIGN
        try:
            renewed = path.stat().st_mtime
            record = json.loads(path.read_text())
            ttl, pid, started, pids = record["ttl"], record["pid"], record["started"], record["pid_namespace"]
        except FileNotFoundError:
            return Standing.DEAD
        except (OSError, ValueError, KeyError, TypeError):
            return Standing.FOREIGN  # unreadable: its liveness cannot be judged, so it is left alone
        if time.time() - renewed > float(ttl):
            return Standing.DEAD
        if pids == namespace("pid") and process_start(int(pid)) != started:
            return Standing.DEAD
        return Standing.LIVE

    def bury(self, labels: Mapping[str, str]) -> None:
        """Remove the lease file of a dead runner once its resources are gone."""
        path = self._lease_path(labels)
        if path is not None and self.standing(labels) is Standing.DEAD:
            path.unlink(missing_ok=True)

    def prune(self) -> None:
        """Remove the lease files of dead runners from this lease's directory, whatever they still label."""
        for path in self.directory.glob("*.json") if self.directory.is_dir() else []:
            labels = {OWNER_LABEL: path.stem, LEASE_LABEL: f"{site()}:{path}"}
            if self.standing(labels) is Standing.DEAD:
                path.unlink(missing_ok=True)

    def _lease_path(self, labels: Mapping[str, str]) -> Path | None:
        """The lease file a resource names, if it is on this site and named like one of its owner."""
        owner = labels.get(OWNER_LABEL)
        place, colon, where = labels.get(LEASE_LABEL, "").partition(":")
        if not colon or place != site() or owner is None:
            return None
        path = Path(where)
        return path if path.is_absolute() and path.name == f"{owner}.json" else None
