"""The grade of one arm attempt: three layers and the exploration effort, each its own field.

None implies another: memory can be delivered and ignored, used and still fail, or absent while the task
passes. The outcome is taken as given (the verifier's result and the mutation audit's verdict).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..contracts import ContractModel, Document
from ..gateway.exchange import ExchangeRecord
from .chain import harness_conversation
from .delivery import DeliveryGrade, grade_delivery, received_contexts
from .effort import ExplorationEffort, measure_effort
from .memory import MemoryDeclaration
from .transcript import Transcript
from .used import UseGrade, grade_use

__all__ = ["Grade", "OutcomeGrade", "grade"]


class OutcomeGrade(ContractModel):
    verifier_passed: bool
    audit_clean: bool  # anything outside the allowed outputs forces reward zero

    @property
    def passed(self) -> bool:
        return self.verifier_passed and self.audit_clean


class Grade(Document):
    kind: Literal["grade"] = "grade"
    schema_version: Literal[1] = 1
    session_id: str
    delivered: DeliveryGrade
    used: UseGrade
    outcome: OutcomeGrade
    effort: ExplorationEffort


def grade(
    transcript: Transcript,
    exchanges: Sequence[ExchangeRecord],
    memory: MemoryDeclaration,
    outcome: OutcomeGrade,
) -> Grade:
    return Grade(
        session_id=transcript.session_id,
        delivered=grade_delivery(transcript, exchanges, memory),
        used=grade_use(transcript, memory, received_contexts(harness_conversation(exchanges), memory)),
        outcome=outcome,
        effort=measure_effort(transcript),
    )
