"""The ``paired-record`` stage: a graded pair becomes the durable record the analysis reads.

The comparability key and the build under test come in as params (the plan derives them from the suite and the
preregistration); everything measured comes in as inputs, so the record can be re-derived from them.
"""

from __future__ import annotations

from ..agent.arm_record import PairRecord
from ..analysis.attempt_record import Build, ComparabilityKey, Completion, PairedAttempt
from ..contracts import ContractModel, Ref
from ..errors import StageError
from ..stages import Ports, StageContext, StageKind, stage
from ..suite.memory_system import CONTROL
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


@stage("paired-record", version=3, kind=StageKind.DETERMINISTIC)
def paired_record(context: StageContext, inputs: RecordInputs, params: RecordParams) -> RecordOutputs:
    store = context.store
    pair = store.get_document(inputs.pair, PairRecord)
    control = store.get_document(inputs.control, ArmGrade)
    treatment = store.get_document(inputs.treatment, ArmGrade)
    for condition, graded in ((CONTROL, control), (pair.system, treatment)):
        if graded.condition != condition or graded.arm not in pair.arms:
            raise StageError(f"the {condition} grade does not grade the {condition} arm of pair {inputs.pair}")
    record = PairedAttempt(
        key=params.key,
        build=params.build,
        attempt=pair.attempt,
        completion=Completion.COMPLETED,
        control=arm_result(store, control),
        treatment=arm_result(store, treatment),
    )
    return RecordOutputs(record=store.put_document(record))
