"""The ``paired-record`` stage: a graded pair becomes the durable record the analysis reads.

The comparability key, the build under test and the preregistered budget come in as params (the plan derives them
from the suite and the preregistration); everything measured comes in as inputs, so the record can be re-derived
from them. The record is completed only when both arms finished (:mod:`.ending`); otherwise it is aborted, kept
whole, and admission excludes it with the reason its arms' endings give. The fence checks of the attempt that went
unobserved are named in it, so the report can say which pairs ran without them. What the treatment's memory
retrieved for the challenge's prompt, when the pair record names a retrieval score, is carried into the record as it
was measured.
"""

from __future__ import annotations

from ..agent.arm_record import PairRecord
from ..agent.retrieval_score import RetrievalScore
from ..analysis.attempt_record import ArmEnding, Build, ComparabilityKey, Completion, PairedAttempt
from ..analysis.prereg import Budget
from ..analysis.retrieval import RetrievalResult
from ..builder import Ports, StageContext, StageKind, stage
from ..contracts import ContractModel, Ref
from ..errors import StageError
from ..fence import CheckVerdict, read_record
from ..suite.memory_system import CONTROL
from .grade import ArmGrade, arm_result

__all__ = ["RecordInputs", "RecordOutputs", "RecordParams", "paired_record"]


class RecordParams(ContractModel):
    key: ComparabilityKey
    build: Build
    budget: Budget  # the preregistration's caps, against which each arm's ending is read


class RecordInputs(Ports):
    pair: Ref[PairRecord]
    control: Ref[ArmGrade]
    treatment: Ref[ArmGrade]


class RecordOutputs(Ports):
    record: Ref[PairedAttempt]


@stage("paired-record", version=5, kind=StageKind.DETERMINISTIC)
def paired_record(context: StageContext, inputs: RecordInputs, params: RecordParams) -> RecordOutputs:
    store = context.store
    pair = store.get_document(inputs.pair, PairRecord)
    control = store.get_document(inputs.control, ArmGrade)
    treatment = store.get_document(inputs.treatment, ArmGrade)
    for condition, graded in ((CONTROL, control), (pair.system, treatment)):
        if graded.condition != condition or graded.arm not in pair.arms:
            raise StageError(f"the {condition} grade does not grade the {condition} arm of pair {inputs.pair}")
    arms = (arm_result(store, control, params.budget), arm_result(store, treatment, params.budget))
    finished = all(arm.ending is ArmEnding.FINISHED for arm in arms)
    _, checks = read_record(store, pair.fence)
    record = PairedAttempt(
        key=params.key,
        build=params.build,
        attempt=pair.attempt,
        completion=Completion.COMPLETED if finished else Completion.ABORTED,
        control=arms[0],
        treatment=arms[1],
        unobserved_checks=tuple(check.check.value for check in checks if check.verdict is CheckVerdict.UNOBSERVED),
        retrieval=None if pair.retrieval is None else _retrieval(store.get_document(pair.retrieval, RetrievalScore)),
    )
    return RecordOutputs(record=store.put_document(record))


def _retrieval(score: RetrievalScore) -> RetrievalResult:
    return RetrievalResult(oracle=score.oracle, depths=score.depths, retrieved=score.retrieved, note=score.note)
