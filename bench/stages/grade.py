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

from ..agent.arm_ending import arm_ending
from ..agent.arm_record import ArmRecord, ConditionName, PromptKind
from ..agent.recorder import read_exchange_log
from ..analysis.attempt_record import ArmEnding, ArmResult, Outcome
from ..analysis.prereg import Budget
from ..builder import Ports, StageContext, StageKind, stage
from ..contracts import ContractModel, Document, Ref
from ..contracts.usage import TokenUsage
from ..errors import StageError
from ..grading import Grade, MemoryDeclaration, OutcomeGrade, Transcript
from ..grading import grade as grade_transcript
from ..grading.restored import RestoredState
from ..harness import harness_named
from ..sandbox.backends import ProcessOutcome
from ..store import Store
from .audit import AuditReceipt
from .verify import VerifierResult

__all__ = ["PUBLIC_CONTRACTS", "ArmGrade", "GradeInputs", "GradeOutputs", "GradeParams", "arm_result", "grade_arm"]


class GradeParams(ContractModel):
    """What grading looks for: the fixture's memory phrases and the challenge's markers of use."""

    memory: MemoryDeclaration


class ArmGrade(Document):
    kind: Literal["arm-grade"] = "arm-grade"
    schema_version: Literal[3] = 3
    arm: Ref[ArmRecord]
    condition: ConditionName
    transcript: Ref[Transcript]
    steps: int
    scored_step: int | None  # index of the step whose final tree the outcome judges: always the last
    scored_prompt: PromptKind | None  # None with scored_step: the arm never started (its attempt was stopped)
    grade: Grade


def _check_judged(arm: ArmRecord, verifier: VerifierResult, audit: AuditReceipt) -> None:
    """Refuse a verifier result or an audit that judged another tree than the arm's."""
    if verifier.tree != arm.final:
        raise StageError(f"the verifier judged tree {verifier.tree}, not the arm's final tree {arm.final}")
    if (audit.start, audit.final) != (arm.start, arm.final):
        raise StageError(
            f"the audit compared {audit.start} with {audit.final}, not the arm's {arm.start} with {arm.final}"
        )


def _transcript(store: Store, arm: ArmRecord) -> Transcript:
    """The arm's transcript; an arm that wrote no session (the apparatus failed) has an empty one, still graded so
    that its pair is recorded, and excluded, rather than lost."""
    streams = [store.get_bytes(step.stream) for step in arm.steps]
    if arm.session is not None:
        return harness_named(arm.harness).parse_session(store.get_bytes(arm.session), streams)
    return Transcript(
        harness=arm.harness, harness_version=None, session_id="none", steps=(), usage=TokenUsage(), cost_usd=None,
        duration_ms=None, started_at=None, finished_at=None, unknown_record_types=(),
    )  # fmt: skip


def _restored(store: Store, arm: ArmRecord) -> RestoredState | None:
    """What grading reads of the runner's copy of the treatment's restored state; None for an arm without one."""
    return None if arm.restored is None else store.get_document(arm.restored, RestoredState)


def grade_arm(
    store: Store, arm_digest: Ref[ArmRecord], memory: MemoryDeclaration, verifier: VerifierResult, audit: AuditReceipt
) -> ArmGrade:
    """The arm's grade; the transcript it was read from is stored too and named in it."""
    arm = store.get_document(arm_digest, ArmRecord)
    _check_judged(arm, verifier, audit)
    transcript = _transcript(store, arm)
    outcome = OutcomeGrade(
        verifier_passed=verifier.outcome is ProcessOutcome.SUCCEEDED, audit_clean=not audit.reward_forced_zero
    )
    exchanges = read_exchange_log(store, arm.exchanges)
    graded = grade_transcript(transcript, exchanges, memory, outcome, arm.runner(), _restored(store, arm))
    scored = arm.steps[arm.scored_step] if arm.steps else None
    return ArmGrade(
        arm=arm_digest,
        condition=arm.condition,
        transcript=store.put_document(transcript),
        steps=len(arm.steps),
        scored_step=None if scored is None else arm.scored_step,
        scored_prompt=None if scored is None else scored.prompt,
        grade=graded,
    )


def arm_result(store: Store, graded: ArmGrade, budget: Budget | None = None) -> ArmResult:
    """The analysis's view of one graded arm: how it ended, the three layers, the validity facts and the measures.

    ``budget`` is the preregistration's; a reader with none at hand (narration, inspection) gets the ending
    without the budget's caps."""
    arm = store.get_document(graded.arm, ArmRecord)
    usage = store.get_document(graded.transcript, Transcript).usage
    tokens = sum(usage.model_dump().values())  # every counted token, cached ones included
    ended = arm_ending(arm, budget, tokens, graded.grade.attachment_failures)
    delivery = graded.grade.delivered
    delivered = delivery.delivered  # by the gateway's record, the session file agreeing, nothing tampered
    return ArmResult(
        outcome=Outcome.PASS if graded.grade.outcome.passed else Outcome.FAIL,
        ending=ended.ending,
        ending_note="" if ended.ending is ArmEnding.FINISHED else ended.note,
        audit_clean=graded.grade.outcome.audit_clean,
        tampered=tuple(str(finding)[:400] for finding in delivery.tampered),
        foreign_channels=tuple(channel[:400] for channel in delivery.foreign_channels),
        not_rederived=tuple(finding[:400] for finding in delivery.not_rederived),
        state_reads=tuple(read[:400] for read in delivery.state_reads),
        received_phrases=delivery.received_by_model,
        delivered=delivered,
        delivered_via=tuple(found.channel.value for found in delivery.channels if found.gateway_phrases)
        if delivered
        else (),
        used=graded.grade.used.used,
        tokens=tokens,
        wall_seconds=sum(step.seconds for step in arm.steps),
        spent_usd=arm.spent_usd,
        usage_bounded=arm.usage_bounded,
    )


class GradeInputs(Ports):
    arm: Ref[ArmRecord]
    verifier: Ref[VerifierResult]
    audit: Ref[AuditReceipt]


class GradeOutputs(Ports):
    grade: Ref[ArmGrade]
    transcript: Ref[Transcript]


@stage("grade", version=6, kind=StageKind.DETERMINISTIC)
def grade(context: StageContext, inputs: GradeInputs, params: GradeParams) -> GradeOutputs:
    store = context.store
    verifier = store.get_document(inputs.verifier, VerifierResult)
    audit = store.get_document(inputs.audit, AuditReceipt)
    document = grade_arm(store, inputs.arm, params.memory, verifier, audit)
    return GradeOutputs(grade=store.put_document(document), transcript=document.transcript)


PUBLIC_CONTRACTS: tuple[type[ContractModel], ...] = (ArmGrade,)
