"""Each memory system's effect against the size of its distractor pool: the same challenges under more noise.

A suite may run its challenges at several pool sizes (0, 50, 500 distractor documents beside the evidence); each
size is its own comparability key, so its own cells and comparisons. Per memory system (treatment condition and
build) and pool size, over the challenges it ran: the admitted pairs, both arms' passes, the pairs only one arm
passed, the difference in pass rate (treatment minus control), the exact McNemar test on the summed discordant
pairs (as the headline pools them) and, beside it, the exact stratified test of the comparison against the shared
control at that size (each challenge a stratum, :mod:`.comparisons`).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from ..contracts import ContractModel
from .attempt_record import Build
from .cell import Cell
from .comparisons import Comparison, ComparisonKind
from .exact import mcnemar_exact

__all__ = ["PoolEffect", "pool_effects"]


class PoolEffect(ContractModel):
    treatment_condition: str
    build: Build
    distractors: int  # the pool size
    challenges: int
    pairs: int
    control_passes: int
    treatment_passes: int
    treatment_only: int
    control_only: int
    difference: float  # treatment minus control pass rate over the pairs
    mcnemar_p: float  # exact, on the discordant pairs summed over the challenges
    stratified_p: float | None  # the pooled stratified exact test against the control at this size


def _stratified(comparisons: Sequence[Comparison], group: Sequence[Cell]) -> float | None:
    """The p of the one comparison against the control whose strata are exactly these cells; None when the cells
    split over several (another fixture or model among them): no single stratified test then covers the row."""
    keys = {cell.key_id for cell in group}
    for comparison in comparisons:
        if comparison.kind is ComparisonKind.VERSUS_CONTROL and {s.key_id for s in comparison.strata} == keys:
            return comparison.pooled.p_value
    return None


def pool_effects(cells: Sequence[Cell], comparisons: Sequence[Comparison]) -> list[PoolEffect]:
    """One row per (treatment condition, build, pool size), in that order."""
    groups: dict[tuple[str, int, str, int], list[Cell]] = {}
    for cell in cells:
        place = (cell.key.treatment_condition, cell.build.sequence, cell.build.label, cell.key.distractors)
        groups.setdefault(place, []).append(cell)
    effects = []
    for (condition, _, _, distractors), group in sorted(groups.items()):
        pairs = sum(len(cell.attempts) for cell in group)
        treatment_only = sum(cell.paired.treatment_only for cell in group)
        control_only = sum(cell.paired.control_only for cell in group)
        effects.append(
            PoolEffect(
                treatment_condition=condition,
                build=group[0].build,
                distractors=distractors,
                challenges=len({cell.key.challenge for cell in group}),
                pairs=pairs,
                control_passes=sum(cell.control.passes for cell in group),
                treatment_passes=sum(cell.treatment.passes for cell in group),
                treatment_only=treatment_only,
                control_only=control_only,
                difference=float(Fraction(treatment_only - control_only, pairs)) if pairs else 0.0,
                mcnemar_p=float(mcnemar_exact(treatment_only, control_only)),
                stratified_p=_stratified(comparisons, group),
            )
        )
    return effects
