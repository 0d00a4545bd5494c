"""The ``paired-record`` stage: a graded pair becomes the durable record the analysis reads.

The comparability key and the build under test come in as params (the plan derives them from the suite and the
preregistration); everything measured comes in as inputs, so the record can be re-derived from them.
"""

from __future__ import annotations

from ..agent.arm_record import Condition, PairRecord
from ..analysis.attempt_record import Build, ComparabilityKey, Completion, PairedAttempt
from ..contracts import ContractModel, Ref
from ..errors import StageError
from ..stages import Ports, StageContext, StageKind, stage
from .grade import ArmGrade, arm_result

__all__ = ["RecordInputs", "RecordOutputs", "RecordParams", "paired_record"]


class RecordParams(ContractModel):
    key: ComparabilityKey
    build: Build


class RecordInputs(Ports):
    pair: Ref[PairRecord]
    control: Ref[ArmGrade]
    treatment: Ref[ArmGrade]


class RecordOutputs(Ports):
    record: Ref[PairedAttempt]


@stage("paired-record", version=2, kind=StageKind.DETERMINISTIC)
def paired_record(context: StageContext, inputs: RecordInputs, params: RecordParams) -> RecordOutputs:
    store = context.store
    pair = store.get_document(inputs.pair, PairRecord)
    grades = {
        Condition.CONTROL: store.get_document(inputs.control, ArmGrade),
        Condition.TREATMENT: store.get_document(inputs.treatment, ArmGrade),
    }
    for condition, graded in grades.items():
        if graded.condition is not condition or graded.arm not in pair.arms:
            raise StageError(f"the {condition} grade does not grade the {condition} arm of pair {inputs.pair}")
    record = PairedAttempt(
        key=params.key,
        build=params.build,
        attempt=pair.attempt,
        completion=Completion.COMPLETED,
        control=arm_result(store, grades[Condition.CONTROL]),
        treatment=arm_result(store, grades[Condition.TREATMENT]),
    )
    return RecordOutputs(record=store.put_document(record))
