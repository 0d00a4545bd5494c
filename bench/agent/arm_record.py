"""What one paired attempt leaves in the store: a record per arm and one for the pair.

These are runner-side documents; the condition names below never reach a container (the specs are checked by
:func:`bench.sandbox.spec.check_neutral`).
"""

from __future__ import annotations

import enum
from typing import Literal

from pydantic import Field

from ..contracts import ContractModel, Digest, Document
from ..provision.receipt import PairVerdict
from ..sandbox.backends import ProcessOutcome
from ..sandbox.spec import ContainerSpec

__all__ = ["PUBLIC_CONTRACTS", "ArmRecord", "Condition", "PairRecord", "PromptKind", "StepRecord"]


class Condition(enum.StrEnum):
    CONTROL = "control"  # no memory attachment
    TREATMENT = "treatment"  # the memory system's hooks, settings and restored state mounted


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
    schema_version: Literal[2] = 2
    condition: Condition
    spec: ContainerSpec
    model: str
    start: Digest
    outcome: ProcessOutcome  # succeeded: every prompt's step exited 0 in time; timed-out: a step was killed
    steps: tuple[StepRecord, ...]
    session: Digest | None  # the native session JSONL as the agent's CLI wrote it; None when none was written
    exchanges: Digest  # the gateway's ExchangeLog for this arm
    final: Digest  # the workspace after the last step
    snapshot: Digest | None  # the memory's snapshot receipt; treatment only

    @property
    def scored_step(self) -> int:
        """Index of the step whose end state is scored: always the last (continuity scores the final step)."""
        return len(self.steps) - 1


class PairRecord(Document):
    """The pair as a whole: its arms in the order they ran, and whether it may count."""

    kind: Literal["pair-run"] = "pair-run"
    schema_version: Literal[1] = 1
    challenge_id: str
    attempt: int = Field(ge=1)
    model: str
    image_id: str
    start: Digest
    spec_diff: Digest
    fence: Digest
    arms: tuple[Digest, ...]  # ArmRecords in run order
    verdict: PairVerdict  # from the treatment's snapshot receipt: an invalid pair is recorded, never a null
    reasons: tuple[str, ...]


PUBLIC_CONTRACTS: tuple[type[ContractModel], ...] = (ArmRecord, PairRecord)
