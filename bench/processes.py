"""Which process is which, and whether it still runs: what leases and claims judge a holder by.

A pid alone names no process for long (pids are reused), so a process is named by its pid and its start time,
and only where that pid means the same process: on this machine (its boot), in this pid namespace. Elsewhere a
holder's liveness cannot be read, and those who judge it fall back on its heartbeat.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ProcessIdentity", "boot_id", "namespace", "process_start"]


def namespace(kind: str) -> str:
    """The inode of this process's ``kind`` namespace (``pid``, ``mnt``), or "unknown"."""
    try:
        return os.readlink(f"/proc/self/ns/{kind}").partition("[")[2].rstrip("]")
    except OSError:
        return "unknown"


def boot_id() -> str:
    """This machine's boot: a new one after every reboot, so a pid from before is no process now."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def process_start(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot, or None when it is gone (or a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return fields[19]


@dataclass(frozen=True)
class ProcessIdentity:
    """A process as others may judge it: where its pid means something, the pid, and when it started."""

    host: str
    pid: int
    start: str | None
    site: str  # boot and pid namespace: only there is ``pid`` this process

    @classmethod
    def current(cls) -> ProcessIdentity:
        pid = os.getpid()
        return cls(socket.gethostname(), pid, process_start(pid), f"{boot_id()}.{namespace('pid')}")

    def gone(self) -> bool:
        """Whether this process is known to have ended: visible from here, and its pid is free or another's."""
        return self.site == ProcessIdentity.current().site and process_start(self.pid) != self.start
