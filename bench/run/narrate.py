"""What the progress lines say about a suite run's stages as they land, read from the documents they stored.

An arm's grade says pass or fail and whether the memory reached the model; a pair says whether it is valid and,
in forward mode, what each arm spent; calibration and certification say their verdicts (a fresh scaffold's
template verifier is refused here, visibly); an admission says admitted or why not; publication ends the run
with the headline (:mod:`bench.analysis.headline`). Reading a document must never stop a run, so a document that
cannot be read is said to be unreadable rather than raised.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from decimal import Decimal

from ..agent.arm_record import ArmRecord, PairRecord
from ..analysis.admission import AdmissionDecision
from ..analysis.attempt_record import ArmEnding
from ..contracts import Digest
from ..errors import BenchError
from ..gateway import Mode
from ..packaging.certify import CertificationReport
from ..pipeline.progress import TaskView
from ..results import load_bundle
from ..stages.calibrate import CalibrationReport
from ..stages.grade import ArmGrade, arm_result
from ..store import Store

__all__ = ["SuiteNarrator"]

Describe = Callable[[Store, dict[str, str]], str | None]


def _grade(store: Store, outputs: dict[str, str]) -> str:
    graded = store.get_document(Digest(outputs["grade"]), ArmGrade)
    result = arm_result(store, graded)
    if result.ending is ArmEnding.ATTACHMENT_FAILED:
        return f"{graded.condition}: attachment failed ({result.ending_note})"
    delivered = f"memory delivered ({', '.join(result.delivered_via)})" if result.delivered else "memory not delivered"
    found = graded.grade.delivered.tampered
    return f"{graded.condition}: {result.outcome.value}, {delivered}" + (f"; tampered: {found[0]}" if found else "")


def _pair(store: Store, outputs: dict[str, str]) -> str:
    """Each system's pair verdict; in forward mode, what the attempt's arms spent at their gateways."""
    pairs = {name.split("/", 1)[1]: Digest(value) for name, value in outputs.items() if name.startswith("pairs/")}
    said = []
    forward = False
    for system, digest in sorted(pairs.items()):
        pair = store.get_document(digest, PairRecord)
        forward = forward or pair.gateway_mode is Mode.FORWARD
        said.append(f"{system}: {pair.verdict.value}" + (f" ({'; '.join(pair.reasons)})" if pair.reasons else ""))
    if forward:
        arms = [Digest(value) for name, value in outputs.items() if name == "control" or name.startswith("treatments/")]
        spent = sum((store.get_document(arm, ArmRecord).spent_usd for arm in arms), Decimal(0))
        said.append(f"spent ${spent:.4f}")
    return ", ".join(said)


def _calibration(store: Store, outputs: dict[str, str]) -> str:
    report = store.get_document(Digest(outputs["calibration"]), CalibrationReport)
    return report.verdict.value


def _certification(store: Store, outputs: dict[str, str]) -> str:
    report = store.get_document(Digest(outputs["report"]), CertificationReport)
    return f"{report.verdict.value} ({len(report.findings)} findings)"


def _admission(store: Store, outputs: dict[str, str]) -> str:
    decision = store.get_document(Digest(outputs["admission"]), AdmissionDecision)
    if decision.decision.value == "admitted":
        return decision.decision.value
    return f"excluded: {decision.reason.value} ({decision.note[:200]})"


@functools.cache
def _store(location: str) -> Store:
    return Store(location)


_DESCRIBERS: dict[str, Describe] = {
    "grade": _grade,
    "paired-attempt": _pair,
    "calibrate": _calibration,
    "certify": _certification,
    "admit": _admission,
}


class SuiteNarrator:
    """The :class:`~bench.pipeline.progress.Narrator` of suite plans."""

    def landed(self, task: TaskView) -> str | None:
        describe = _DESCRIBERS.get(task.stage)
        if describe is None or not task.store:
            return None
        try:
            return describe(_store(task.store), task.outputs)
        except (BenchError, KeyError, ValueError) as exc:
            return f"(its record cannot be read: {exc})"

    def finale(self, tasks: list[TaskView]) -> list[str]:
        published = [task for task in tasks if task.stage == "publish" and "published" in task.outputs]
        lines: list[str] = []
        for task in published:
            try:
                bundle = load_bundle(task.outputs["published"], _store(task.store))
                lines += bundle.headline.lines()
            except BenchError as exc:
                lines.append(f"the published bundle {task.outputs['published']} cannot be summarised: {exc}")
        return lines
