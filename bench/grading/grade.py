"""The grade of one arm attempt: three layers and the exploration effort, each its own field.

None implies another: memory can be delivered and ignored, used and still fail, or absent while the task
passes. The outcome is taken as given (the verifier's result and the mutation audit's verdict).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..contracts import ContractModel, Document
from ..gateway.exchange import ExchangeRecord
from .chain import RunnerRecord, harness_conversation
from .delivery import DeliveryGrade, grade_delivery, received_contexts
from .effort import ExplorationEffort, measure_effort
from .memory import MemoryDeclaration
from .transcript import StepSource, Transcript
from .used import UseGrade, grade_use

__all__ = ["Grade", "OutcomeGrade", "grade", "hook_errors"]


class OutcomeGrade(ContractModel):
    verifier_passed: bool
    audit_clean: bool  # anything outside the allowed outputs forces reward zero

    @property
    def passed(self) -> bool:
        return self.verifier_passed and self.audit_clean


class Grade(Document):
    kind: Literal["grade"] = "grade"
    schema_version: Literal[3] = 3
    session_id: str
    delivered: DeliveryGrade
    hook_errors: tuple[str, ...] = ()  # "<hook>: <what it wrote>" for each hook that failed, in order
    used: UseGrade
    outcome: OutcomeGrade
    effort: ExplorationEffort


def hook_errors(transcript: Transcript) -> tuple[str, ...]:
    """The hooks that failed, as the transcript's hook records say (the parser keeps them as system steps)."""
    return tuple(
        f"{step.origin.split(':', 2)[-1]}: {step.text[:400]}"
        for step in transcript.by_source(StepSource.SYSTEM)
        if step.origin.startswith("attachment:hook_")
    )


def grade(
    transcript: Transcript,
    exchanges: Sequence[ExchangeRecord],
    memory: MemoryDeclaration,
    outcome: OutcomeGrade,
    runner: RunnerRecord,
) -> Grade:
    """``runner`` is the runner's own record of the arm (its prompts, cwd and step times): the conversation is
    chained from it."""
    conversation = harness_conversation(exchanges, runner)
    return Grade(
        session_id=transcript.session_id,
        delivered=grade_delivery(transcript, conversation, memory),
        hook_errors=hook_errors(transcript),
        used=grade_use(conversation, memory, received_contexts(conversation, memory)),
        outcome=outcome,
        effort=measure_effort(transcript),
    )
