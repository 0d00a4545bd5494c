"""The treatment arm's memory: restored through the provisioner adapter, mounted through the harness's own hooks.

:func:`live_memory` restores the fixture with the reference memory system (argv prefix
``[python, -m, bench.memory, --home, DIR]``), yields the restored session and destroys it on every way out. The
adapter's :func:`~bench.provision.adapter.provisioned` is asynchronous; the arm run is blocking Docker work, so the
context is driven on a private event loop kept for the whole block: restore on entry, destroy on exit (Ctrl-C
included, since the exit runs in ``finally``), with the adapter's own finaliser logic unchanged.

:func:`memory_attachment` is the one respect in which the arms differ: the restored state, the hook program and
the agent user's ``~/.claude/settings.json``, each mounted read-only (see :mod:`bench.memory.install`).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..memory.install import stage_attachment
from ..memory.provisioner import state_path
from ..provision.adapter import MemorySession, Provisioner, provisioned
from ..provision.fixture import Fixture
from ..provision.receipt import SnapshotReceipt
from ..sandbox.layout import USER_HOME
from ..sandbox.spec import MemoryAttachment, Mount

__all__ = ["SETTINGS_PATH", "LiveMemory", "live_memory", "memory_attachment", "reference_provisioner"]

SETTINGS_PATH = PurePosixPath(USER_HOME) / ".claude" / "settings.json"


def reference_provisioner(home: Path, fixture_root: Path) -> Provisioner:
    """The project's reference memory system, keeping its projects under ``home``."""
    return Provisioner(prefix=(sys.executable, "-m", "bench.memory", "--home", str(home)), fixture_root=fixture_root)


@dataclass(frozen=True)
class LiveMemory:
    """A restored memory and the event loop its adapter session lives on."""

    session: MemorySession
    loop: asyncio.AbstractEventLoop

    def snapshot(self) -> SnapshotReceipt:
        """Re-read the live memory and judge it (blocking); a refused snapshot is an invalid receipt."""
        return self.loop.run_until_complete(self.session.snapshot())


@contextmanager
def live_memory(provisioner: Provisioner, fixture: Fixture, graph_arm: str, run_identity: str) -> Iterator[LiveMemory]:
    """Restore, yield the live memory, destroy on every way out."""
    loop = asyncio.new_event_loop()
    try:
        context = provisioned(provisioner, fixture, graph_arm, run_identity)
        session = loop.run_until_complete(context.__aenter__())
        try:
            yield LiveMemory(session, loop)
        except BaseException as exc:
            loop.run_until_complete(context.__aexit__(type(exc), exc, exc.__traceback__))
            raise
        loop.run_until_complete(context.__aexit__(None, None, None))
    finally:
        loop.close()


def memory_attachment(home: Path, session: MemorySession, staging: Path) -> MemoryAttachment:
    """Stage the hook program and settings in ``staging`` and mount them with the restored state, read-only."""
    pairs = stage_attachment(staging, state_path(home, session.project), SETTINGS_PATH)
    for directory in {staging, home, state_path(home, session.project).parent}:
        directory.chmod(0o755)  # the agent user (not root) reads the mounted files
    for host, _ in pairs:
        host.chmod(0o644)
    return MemoryAttachment(mounts=tuple(Mount(source=str(host), target=str(target)) for host, target in pairs))
