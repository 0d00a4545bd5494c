"""What one attempt leaves in the store: a record per arm and one per memory system's pair.

An attempt runs one control arm shared by every declared memory system and one treatment arm per system; each
system's pair is that control and its own treatment. An arm's condition is ``control`` or the system's name.
These are runner-side documents; the condition names never reach a container (the specs are checked by
:func:`bench.sandbox.spec.check_neutral`).
"""

from __future__ import annotations

import enum
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from ..contracts import ContractModel, Digest, Document
from ..gateway.config import Mode
from ..provision.receipt import PairVerdict
from ..sandbox.backends import ProcessOutcome
from ..sandbox.spec import ContainerSpec

__all__ = ["PUBLIC_CONTRACTS", "ArmRecord", "ConditionName", "PairRecord", "PromptKind", "StepRecord"]

# ``control`` (bench.suite.memory_system.CONTROL) or a memory system's name.
ConditionName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,31}$")]


class PromptKind(enum.StrEnum):
    INITIAL = "initial"
    FOLLOW_UP = "follow-up"  # resumes the initial step's native session


class StepRecord(ContractModel):
    """One ``claude -p`` invocation."""

    prompt: PromptKind
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
    spent_usd: Decimal = Field(ge=0, allow_inf_nan=False)  # what the gateway metered (forward mode; 0 in policy)
    cap_usd: Decimal | None = Field(default=None, ge=0, allow_inf_nan=False)  # the arm's cap (forward mode)

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
    # The treatment's RetrievalScore (bench.agent.retrieval_score) for the same systems: what its retrieval names
    # for the challenge's prompt, beside the challenge's oracle documents. None: not measured.
    retrieval: Digest | None = None


PUBLIC_CONTRACTS: tuple[type[ContractModel], ...] = (ArmRecord, PairRecord)
