"""The ``grade`` stage: one arm's three layers and effort, from what the ``paired-attempt`` stage recorded.

The layers themselves are the grading library (:mod:`bench.grading`); this module is the stage that applies it.

Inputs: ``arm`` (an ArmRecord), ``fixture`` (the fixture tree: what the memory says), ``verifier`` (the verifier
result on the arm's final tree) and ``audit`` (the mutation audit of start against final). The stage checks the
inputs belong together (the verifier and the audit judged this arm's final tree) and refuses them otherwise.

Continuity: the transcript spans every step of the arm's one native session, so delivery and use are read over
the whole session, while the outcome is scored once, on the final step's tree; the grade names that step.

The memory declaration is the fixture's: its ``memory_phrases`` for delivery and, for use, the challenge's markers
(anchored workspace paths, identifiers); with the MCP servers the arm's memory system declares, whose tool results
are its memory-tool channel.
"""

from __future__ import annotations

from typing import Literal

from ..agent.arm_record import ArmRecord, ConditionName, PromptKind
from ..agent.recorder import read_exchange_log
from ..analysis.attempt_record import ArmResult, Outcome
from ..contracts import ContractModel, Digest, Document, Ref
from ..errors import StageError
from ..grading import Grade, MemoryDeclaration, OutcomeGrade, Transcript, grade, parse_claude_session
from ..sandbox.audit import AuditReceipt
from ..sandbox.backends import ProcessOutcome
from ..sandbox.verify import VerifierResult
from ..stages import Ports, StageContext, StageKind, stage
from ..store import Store

__all__ = ["PUBLIC_CONTRACTS", "ArmGrade", "GradeInputs", "GradeOutputs", "GradeParams", "arm_result", "grade_arm"]


class GradeParams(ContractModel):
    """What grading looks for: the fixture's memory phrases and the challenge's markers of use."""

    memory: MemoryDeclaration


class ArmGrade(Document):
    kind: Literal["arm-grade"] = "arm-grade"
    schema_version: Literal[2] = 2
    arm: Ref[ArmRecord]
    condition: ConditionName
    transcript: Ref[Transcript]
    steps: int
    scored_step: int  # index of the step whose final tree the outcome judges: always the last
    scored_prompt: PromptKind
    grade: Grade


def _session_of(arm: ArmRecord, verifier: VerifierResult, audit: AuditReceipt) -> Digest:
    """The arm's session file, after checking the verifier and the audit judged this arm."""
    if verifier.tree != arm.final:
        raise StageError(f"the verifier judged tree {verifier.tree}, not the arm's final tree {arm.final}")
    if (audit.start, audit.final) != (arm.start, arm.final):
        raise StageError(
            f"the audit compared {audit.start} with {audit.final}, not the arm's {arm.start} with {arm.final}"
        )
    if arm.session is None:
        raise StageError(
            f"the {arm.condition} arm recorded no session file (steps: "
            f"{[(s.exit_code, s.timed_out) for s in arm.steps]}); its stderr says why the agent never started"
        )
    return arm.session


def grade_arm(
    store: Store, arm_digest: Ref[ArmRecord], memory: MemoryDeclaration, verifier: VerifierResult, audit: AuditReceipt
) -> ArmGrade:
    """The arm's grade; the transcript it was read from is stored too and named in it."""
    arm = store.get_document(arm_digest, ArmRecord)
    session = _session_of(arm, verifier, audit)
    streams = [store.get_bytes(step.stream) for step in arm.steps]
    transcript = parse_claude_session(store.get_bytes(session), streams)
    outcome = OutcomeGrade(
        verifier_passed=verifier.outcome is ProcessOutcome.SUCCEEDED, audit_clean=not audit.reward_forced_zero
    )
    graded = grade(transcript, read_exchange_log(store, arm.exchanges), memory, outcome)
    scored = arm.scored_step
    return ArmGrade(
        arm=arm_digest,
        condition=arm.condition,
        transcript=store.put_document(transcript),
        steps=len(arm.steps),
        scored_step=scored,
        scored_prompt=arm.steps[scored].prompt,
        grade=graded,
    )


def arm_result(store: Store, graded: ArmGrade) -> ArmResult:
    """The analysis's view of one graded arm: the binary outcome, the two other layers, tokens and wall time."""
    arm = store.get_document(graded.arm, ArmRecord)
    usage = store.get_document(graded.transcript, Transcript).usage
    delivery = graded.grade.delivered
    # Delivered means the model received it: the transcript's injected steps and the gateway log must agree.
    delivered = delivery.delivered and delivery.gateway_agrees
    return ArmResult(
        outcome=Outcome.PASS if graded.grade.outcome.passed else Outcome.FAIL,
        delivered=delivered,
        delivered_via=tuple(found.channel.value for found in delivery.channels if found.phrases) if delivered else (),
        used=graded.grade.used.used,
        tokens=sum(usage.model_dump().values()),  # every counted token, cached ones included
        wall_seconds=sum(step.seconds for step in arm.steps),
        spent_usd=arm.spent_usd,
    )


class GradeInputs(Ports):
    arm: Ref[ArmRecord]
    verifier: Ref[VerifierResult]
    audit: Ref[AuditReceipt]


class GradeOutputs(Ports):
    grade: Ref[ArmGrade]
    transcript: Ref[Transcript]


@stage("grade", version=3, kind=StageKind.DETERMINISTIC)
def grade_stage(context: StageContext, inputs: GradeInputs, params: GradeParams) -> GradeOutputs:
    store = context.store
    verifier = store.get_document(inputs.verifier, VerifierResult)
    audit = store.get_document(inputs.audit, AuditReceipt)
    document = grade_arm(store, inputs.arm, params.memory, verifier, audit)
    return GradeOutputs(grade=store.put_document(document), transcript=document.transcript)


PUBLIC_CONTRACTS: tuple[type[ContractModel], ...] = (ArmGrade,)
