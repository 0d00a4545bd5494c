"""The provisioner adapter: the one boundary through which any memory system is plugged in.

Configured by an argv prefix and a fixture root. :func:`provisioned` is how a run uses it::

    provisioner = Provisioner(prefix=("my-memory", "--home", "/srv/mem"), fixture_root=Path("fixtures/x"))
    async with provisioned(provisioner, fixture, "backfilled", "run-7.attempt-1") as session:
        ...  # run the agent
        receipt = await session.snapshot()

destroy runs in the finalizer on every path out of the block: normal exit, an exception from the agent, a timeout,
a refused snapshot, cancellation and Ctrl-C (``asyncio.run`` turns SIGINT into cancelling the main task, and the
provisioner runs in its own session so the keystroke does not kill it first). If restore itself is refused, destroy
still runs when the refused reply named a valid project; a restore that timed out or printed garbage named none, so
there is nothing to address and the call log says so.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from bench.contracts import ContractModel, ImageId
from bench.contracts.files import validation_summary
from bench.errors import ContractError

from .errors import ProvisionRefused, RefusalReason
from .fixture import Fixture, check_expected_hits, verify_artifact
from .messages import (
    ArtifactRef,
    DestroyRequest,
    DestroyResponse,
    HookEvent,
    ProjectName,
    RestoreArtifacts,
    RestoreRequest,
    RestoreResponse,
    RetrieveRequest,
    RetrieveResponse,
    SnapshotRequest,
    SnapshotResponse,
    Verb,
)
from .protocol_call import CallRecord, ProcessLimits, run_verb
from .receipt import SnapshotReceipt, snapshot_receipt

__all__ = ["MemorySession", "Provisioner", "provisioned"]

_PROJECT = TypeAdapter(ProjectName)
RequestT = TypeVar("RequestT", bound=ContractModel)


def _request(model: type[RequestT], **fields: Any) -> RequestT:
    """A request message from the runner's own values; a value the protocol refuses is named, never a traceback."""
    try:
        return model(**fields)
    except ValidationError as exc:
        first = ".".join(str(part) for part in exc.errors()[0]["loc"]) or None
        raise ContractError(
            f"cannot send a {model.__name__}: {validation_summary(exc)}", field=first, hint="see `stele-bench schema`"
        ) from None


@dataclass(frozen=True)
class Provisioner:
    """A memory system as the runner sees it: an argv prefix, a fixture root and call limits.

    ``timeouts`` overrides ``limits.timeout_seconds`` per verb (a suite declares each verb's timeout).
    """

    prefix: tuple[str, ...]
    fixture_root: Path
    limits: ProcessLimits = field(default_factory=ProcessLimits)
    timeouts: Mapping[Verb, float] = field(default_factory=dict)
    image: ImageId | None = None  # the image the system's tools run in (its layer), handed to restore

    def limits_for(self, verb: Verb) -> ProcessLimits:
        timeout = self.timeouts.get(verb)
        return self.limits if timeout is None else replace(self.limits, timeout_seconds=timeout)

    def __post_init__(self) -> None:
        # An empty prefix would run the verb itself as the program; an empty word names no program either.
        if not self.prefix or not self.prefix[0] or any("\x00" in word for word in self.prefix):
            raise ContractError(
                f"a provisioner's argv prefix must start with a program, got {list(self.prefix)!r}",
                field="prefix",
                hint='give the command that runs the memory system, e.g. "my-memory --home DIR"',
            )

    def restore_request(
        self, fixture: Fixture, graph_arm: str, run_identity: str, corpus: ArtifactRef | None = None
    ) -> RestoreRequest:
        """The restore message, after every artifact was resolved inside the fixture root and its SHA-256 checked.

        ``corpus``, when given, is handed as the evidence corpus instead of the fixture's own: the evidence with a
        distractor pool beside it (:func:`~bench.provision.pool.seed_corpus`, which verified the evidence)."""
        arm = fixture.graph_arm(graph_arm)
        evidence = verify_artifact(self.fixture_root, fixture.evidence_corpus) if corpus is None else corpus
        check_expected_hits(fixture, evidence)
        return _request(
            RestoreRequest,
            fixture=fixture.fixture_id,
            graph_arm=arm.name,
            run_identity=run_identity,
            artifacts=RestoreArtifacts(evidence_corpus=evidence, graph=verify_artifact(self.fixture_root, arm.graph)),
            probes=tuple(p.request() for p in fixture.probes),
            image=self.image,
        )

    async def restore(self, request: RestoreRequest, log: list[CallRecord]) -> RestoreResponse:
        return await run_verb(self.prefix, Verb.RESTORE, request, RestoreResponse, self.limits_for(Verb.RESTORE), log)

    async def snapshot(self, project: str, log: list[CallRecord]) -> SnapshotResponse:
        request = _request(SnapshotRequest, project=project)
        return await run_verb(
            self.prefix, Verb.SNAPSHOT, request, SnapshotResponse, self.limits_for(Verb.SNAPSHOT), log
        )

    async def retrieve(self, project: str, events: tuple[HookEvent, ...], log: list[CallRecord]) -> RetrieveResponse:
        """What the system's hooks would inject for ``events`` (one batch); a reply of another length is refused."""
        request = _request(RetrieveRequest, project=project, events=events)
        response = await run_verb(
            self.prefix, Verb.RETRIEVE, request, RetrieveResponse, self.limits_for(Verb.RETRIEVE), log
        )
        answered = [("context(s)", len(response.contexts))]
        answered += [] if response.sources is None else [("source list(s)", len(response.sources))]
        for what, count in answered:
            if count != len(events):
                raise ProvisionRefused(
                    RefusalReason.INVALID_RESPONSE,
                    f"retrieve answered {count} {what} for {len(events)} event(s); a RetrieveResponse has one "
                    "entry per event (a null context, an empty source list where the hook injects nothing)",
                    verb=Verb.RETRIEVE.value,
                )
        return response

    async def destroy(self, project: str, log: list[CallRecord]) -> DestroyResponse:
        request = _request(DestroyRequest, project=project)
        return await run_verb(self.prefix, Verb.DESTROY, request, DestroyResponse, self.limits_for(Verb.DESTROY), log)


@dataclass
class MemorySession:
    """One restored memory state, live for one run."""

    provisioner: Provisioner
    fixture: Fixture
    request: RestoreRequest
    restored: RestoreResponse
    log: list[CallRecord]

    @property
    def project(self) -> str:
        return self.restored.project

    async def snapshot(self) -> SnapshotReceipt:
        """Re-read the live memory and judge it; a refused snapshot yields an invalid receipt naming the refusal."""
        outcome: SnapshotResponse | ProvisionRefused
        try:
            outcome = await self.provisioner.snapshot(self.project, self.log)
        except ProvisionRefused as refused:
            outcome = refused
        return snapshot_receipt(self.fixture, self.request, self.restored, outcome, tuple(self.log))


@asynccontextmanager
async def provisioned(
    provisioner: Provisioner,
    fixture: Fixture,
    graph_arm: str,
    run_identity: str,
    log: list[CallRecord] | None = None,
    corpus: ArtifactRef | None = None,
) -> AsyncIterator[MemorySession]:
    """Restore, yield the live session, and destroy on every way out (see the module docstring).

    Artifact refusals happen before any process starts, so there is nothing to destroy. ``log`` (when given)
    receives every call record, destroy included, even when the block fails. ``corpus`` replaces the fixture's
    evidence corpus in the restore request (the evidence with its distractor pool).
    """
    calls: list[CallRecord] = [] if log is None else log
    request = provisioner.restore_request(fixture, graph_arm, run_identity, corpus)
    try:
        restored = await provisioner.restore(request, calls)
    except ProvisionRefused as refused:
        project = _named_project(refused.stdout_object)
        if project is not None:
            await _destroy_quietly(provisioner, project, calls)
        raise
    try:
        yield MemorySession(provisioner, fixture, request, restored, calls)
    except BaseException:
        await _destroy_quietly(provisioner, restored.project, calls)
        raise
    await provisioner.destroy(restored.project, calls)


async def _destroy_quietly(provisioner: Provisioner, project: str, calls: list[CallRecord]) -> None:
    # Another error is already on its way out; a refused destroy is in the call log and must not mask it.
    with suppress(ProvisionRefused):
        await provisioner.destroy(project, calls)


def _named_project(obj: dict[str, object] | None) -> str | None:
    if not isinstance(obj, dict):
        return None
    try:
        return _PROJECT.validate_python(obj.get("project"))
    except ValidationError:
        return None
