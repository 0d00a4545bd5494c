"""The ``paired-record`` stage: a graded pair becomes the durable record the analysis reads.

The comparability key and the build under test come in as params (the plan derives them from the suite and the
preregistration); everything measured comes in as inputs, so the record can be re-derived from them.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..agent.grading import ArmGrade, arm_result
from ..agent.records import Condition, PairRecord
from ..analysis.records import Build, ComparabilityKey, Completion, PairedAttempt
from ..contracts import ContractModel, Digest
from ..errors import StageError
from ..stages.stage import StageKind, stage
from ..store import Store

__all__ = ["RecordParams", "paired_record"]


class RecordParams(ContractModel):
    key: ComparabilityKey
    build: Build


@stage("paired-record", version=1, kind=StageKind.DETERMINISTIC, params=RecordParams)
def paired_record(store: Store, inputs: Mapping[str, Digest], params: RecordParams) -> dict[str, Digest]:
    """Inputs ``pair``, ``control`` and ``treatment`` (arm grades); output the ``record``."""
    pair = store.get_document(inputs["pair"], PairRecord)
    grades = {name: store.get_document(inputs[name], ArmGrade) for name in ("control", "treatment")}
    for name, graded in grades.items():
        if graded.condition is not Condition(name) or graded.arm not in pair.arms:
            raise StageError(f"the {name} grade does not grade the {name} arm of pair {inputs['pair']}")
    record = PairedAttempt(
        key=params.key,
        build=params.build,
        attempt=pair.attempt,
        completion=Completion.COMPLETED,
        control=arm_result(store, grades["control"]),
        treatment=arm_result(store, grades["treatment"]),
    )
    return {"record": store.put_document(record)}
