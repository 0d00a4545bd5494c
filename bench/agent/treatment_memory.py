"""A treatment arm's memory: any declared system, restored through the provisioner adapter for one run.

:func:`system_provisioner` makes the adapter's :class:`~bench.provision.adapter.Provisioner` from a declaration
(the argv prefix resolved against the suite directory, the declared timeouts). :func:`live_memory` restores the
fixture, yields the restored session and destroys it on every way out. The adapter's
:func:`~bench.provision.adapter.provisioned` is asynchronous; the arm run is blocking Docker work, so the context is
driven on a private event loop kept for the whole block: restore on entry, destroy on exit (Ctrl-C included, since
the exit runs in ``finally``), with the adapter's own finaliser logic unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..contracts import ImageId
from ..provision.adapter import MemorySession, Provisioner, provisioned
from ..provision.code import resolve_provisioner
from ..provision.fixture import Fixture
from ..provision.messages import ArtifactRef, HookEvent, RetrieveResponse, Verb
from ..provision.protocol_call import CallRecord
from ..provision.receipt import SnapshotReceipt
from ..suite.memory_system import MemorySystem

__all__ = ["LiveMemory", "live_memory", "system_provisioner"]


def system_provisioner(
    system: MemorySystem, suite_root: Path, fixture_root: Path, image: str | None = None
) -> Provisioner:
    """The adapter for ``system``: its argv prefix (``argv[0]`` on PATH or under ``suite_root``), timeouts and the
    image its tools run in (its layer's, when it declares one)."""
    timeouts = system.timeouts
    return Provisioner(
        prefix=resolve_provisioner(system, suite_root),
        fixture_root=fixture_root,
        image=None if image is None else ImageId(image),
        timeouts={
            Verb.RESTORE: timeouts.restore_seconds,
            Verb.SNAPSHOT: timeouts.snapshot_seconds,
            Verb.DESTROY: timeouts.destroy_seconds,
            # Retrieve reads the state as snapshot does; a declaration has no timeout of its own for it.
            Verb.RETRIEVE: timeouts.snapshot_seconds,
        },
    )


@dataclass(frozen=True)
class LiveMemory:
    """A restored memory and the event loop its adapter session lives on."""

    session: MemorySession
    loop: asyncio.AbstractEventLoop

    def snapshot(self) -> SnapshotReceipt:
        """Re-read the live memory and judge it (blocking); a refused snapshot is an invalid receipt."""
        return self.loop.run_until_complete(self.session.snapshot())

    @property
    def deterministic(self) -> bool:
        """Whether restore declared the system's retrieval deterministic, so its injected context is re-derived."""
        declared = self.session.restored.retrieval
        return declared is not None and declared.deterministic

    def retrieve(self, events: tuple[HookEvent, ...], log: list[CallRecord]) -> tuple[str | None, ...]:
        """What the system's hooks would inject for ``events`` over the restored state (blocking; one batch)."""
        return self.answer(events, log).contexts

    def answer(self, events: tuple[HookEvent, ...], log: list[CallRecord]) -> RetrieveResponse:
        """The whole ``retrieve`` answer for one batch of ``events``: contexts and, if the system names them, the
        documents each was drawn from (blocking)."""
        session = self.session
        return self.loop.run_until_complete(session.provisioner.retrieve(session.project, events, log))


@contextmanager
def live_memory(
    provisioner: Provisioner, fixture: Fixture, graph_arm: str, run_identity: str, corpus: ArtifactRef | None = None
) -> Iterator[LiveMemory]:
    """Restore (handing ``corpus`` as the evidence when given), yield the live memory, destroy on every way out."""
    loop = asyncio.new_event_loop()
    try:
        context = provisioned(provisioner, fixture, graph_arm, run_identity, corpus=corpus)
        session = loop.run_until_complete(context.__aenter__())
        try:
            yield LiveMemory(session, loop)
        except BaseException as exc:
            loop.run_until_complete(context.__aexit__(type(exc), exc, exc.__traceback__))
            raise
        loop.run_until_complete(context.__aexit__(None, None, None))
    finally:
        loop.close()
