"""What one attempt leaves in the store: a record per arm and one per memory system's pair.

An attempt runs one control arm shared by every declared memory system and one treatment arm per system; each
system's pair is that control and its own treatment. An arm's condition is ``control`` or the system's name.
These are runner-side documents; the condition names never reach a container (the specs are checked by
:func:`bench.sandbox.spec.check_neutral`).
"""

from __future__ import annotations

import enum
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, StringConstraints, model_serializer

from ..contracts import ContractModel, Digest, Document
from ..errors import ContractError
from ..gateway import Mode
from ..gateway.metering import ArmStop
from ..grading.chain import RunnerRecord
from ..harness import DEFAULT_HARNESS, HarnessName, default_unnamed
from ..provision.receipt import PairVerdict
from ..sandbox.backends import ProcessOutcome
from ..sandbox.spec import ContainerSpec
from .state_copy import StateCopy

__all__ = ["PUBLIC_CONTRACTS", "ArmRecord", "ConditionName", "PairRecord", "PromptKind", "StepRecord"]

# ``control`` (bench.suite.memory_system.CONTROL) or a memory system's name.
ConditionName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,31}$")]


class PromptKind(enum.StrEnum):
    INITIAL = "initial"
    FOLLOW_UP = "follow-up"  # resumes the initial step's native session


class StepRecord(ContractModel):
    """One invocation of the harness's CLI. ``text`` is the prompt as the runner sent it and ``started_at``/``ended_at``
    when the exec began and was over, by the runner's clock (UTC, ISO 8601, milliseconds): grading chains the
    gateway's conversation from them (:class:`~bench.grading.chain.RunnerRecord`). Records made before they were
    kept have none, and are refused by grading."""

    prompt: PromptKind
    text: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    session_id: str | None  # from the stream's init event; None when the agent never started a session
    resumed: str | None  # the session id passed to --resume
    stream: Digest  # the stream-json stdout, whole
    stderr: str
    exit_code: int | None  # None: killed at the deadline
    timed_out: bool
    seconds: float = Field(ge=0)


class ArmRecord(Document):
    kind: Literal["arm-record"] = "arm-record"
    schema_version: Literal[3] = 3
    condition: ConditionName
    spec: ContainerSpec
    model: str
    start: Digest
    outcome: ProcessOutcome  # succeeded: every prompt's step exited 0 in time; timed-out: a step was killed
    steps: tuple[StepRecord, ...]
    session: Digest | None  # the native session JSONL as the agent's CLI wrote it; None when none was written
    exchanges: Digest  # the gateway's ExchangeLog for this arm
    final: Digest  # the workspace after the last step
    snapshot: Digest | None  # the memory system's snapshot receipt; None in the control arm
    # The memory's mounted state as the runner copied it before the arm ran and after it (treatment arms only):
    # what the memory supplied is re-derived from the first; what differs in the second is the agent's writing.
    state_before: tuple[StateCopy, ...] = ()
    state_after: tuple[StateCopy, ...] = ()
    # The RestoredState grading reads of the first copy (bench.grading.restored): its text files and its pieces
    restored: Digest | None = None
    spent_usd: Decimal = Field(ge=0, allow_inf_nan=False)  # what the gateway metered (forward mode; 0 in policy)
    cap_usd: Decimal | None = Field(default=None, ge=0, allow_inf_nan=False)  # the arm's cap (forward mode)
    # Forward mode, from the gateway's meter. ``bounded_answers``: answers charged their upper bound because their
    # usage was missing, unreadable or beyond the request's bounds; with any, ``spent_usd`` is partly a bound and
    # the tokens the harness counted are not the provider's, so the arm's usage is *bounded*, not reported.
    bounded_answers: int = Field(default=0, ge=0)
    bounded_usd: Decimal = Field(default=Decimal(0), ge=0, allow_inf_nan=False)  # of spent_usd, those bounds
    cap_refusals: int = Field(default=0, ge=0)  # requests refused because their worst case did not fit the cap
    stop: ArmStop | None = None  # the gateway stopped the arm for its provider's fault, or (not started) another's
    started: bool = True  # False: the arm never ran, because an earlier arm of its attempt ended with ``stop``
    harness: HarnessName = DEFAULT_HARNESS  # the coding agent the arm ran (its session is in that one's format)

    @model_serializer(mode="wrap")
    def _default_harness_unnamed(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return default_unnamed(handler(self))

    @property
    def usage_bounded(self) -> bool:
        """Some answer's cost is an upper bound, not a reported usage: token and dollar statistics leave it out."""
        return self.bounded_answers > 0

    def runner(self) -> RunnerRecord:
        """The runner's own record of the arm: the prompts it sent and when each step ran."""
        missing = [n for n, step in enumerate(self.steps) if None in (step.text, step.started_at, step.ended_at)]
        if missing:
            raise ContractError(
                f"arm record steps {missing} keep no prompt text or step times (made before they were recorded); "
                "run the attempt again with this version",
                field="steps",
            )
        windows = tuple(
            (datetime.fromisoformat(str(step.started_at)), datetime.fromisoformat(str(step.ended_at)))
            for step in self.steps
        )
        prompts = tuple(str(step.text) for step in self.steps)
        return RunnerRecord(prompts=prompts, cwd=self.spec.workdir, windows=windows, harness=self.harness)

    @property
    def scored_step(self) -> int:
        """Index of the step whose end state is scored: always the last (continuity scores the final step)."""
        return len(self.steps) - 1


class PairRecord(Document):
    """One memory system's pair: the attempt's shared control and that system's treatment, and whether it counts."""

    kind: Literal["pair-run"] = "pair-run"
    schema_version: Literal[4] = 4
    challenge_id: str
    attempt: int = Field(ge=1)
    system: ConditionName  # the memory system whose treatment this pair holds
    model: str
    gateway_mode: Mode
    image_id: str
    start: Digest
    spec_diff: Digest  # control against this system's treatment: they differ only in the attachment
    fence: Digest  # the attempt's fence record (shared by its pairs: the arms run under one fence)
    order: tuple[ConditionName, ...]  # every condition of the attempt, in the order its arms ran
    arms: tuple[Digest, Digest]  # the control's and the treatment's ArmRecords, in run order
    verdict: PairVerdict  # from the treatment's snapshot receipt: an invalid pair is recorded, never a null
    reasons: tuple[str, ...]
    # The treatment's InjectedRederivation (bench.agent.rederive_injected) when its memory system declared
    # deterministic retrieval; None otherwise. Its findings exclude the pair at admission.
    rederivation: Digest | None = None
    # The treatment's ToolReplay (bench.agent.replay_tools): its memory-tool results re-derived from the state copy
    # taken before the arm; None when it made no memory-tool call. Its findings exclude the pair at admission.
    replay: Digest | None = None
    # Files of the memory's state the arm changed, by mount target ("<target>: <path>, ..."): the agent's writing,
    # never the system's. A read-only location among them is a finding that excludes the pair.
    agent_writes: tuple[str, ...] = ()
    state_findings: tuple[str, ...] = ()
    # The treatment's RetrievalScore (bench.agent.retrieval_score) for the same systems: what its retrieval names
    # for the challenge's prompt, beside the challenge's oracle documents. None: not measured.
    retrieval: Digest | None = None


PUBLIC_CONTRACTS: tuple[type[ContractModel], ...] = (ArmRecord, PairRecord)
