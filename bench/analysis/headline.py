"""The headline of a statistics summary: for each memory system, passes and deliveries beside the control's, and
the pooled paired effect.

What a run's last lines say. The summary's cells stay the unit of inference (each comparability key and build
apart); the headline adds a system's cells up across challenges for one glance, and says so: the pooled effect is
the difference in pass rate over that system's admitted pairs, with the counts of pairs that passed only with the
memory and only without, and the exact McNemar test on those discordant counts. Admitted pairs only, as the
summary itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .admission import ExclusionCount
from .cell import ArmSummary, Cell
from .exact import mcnemar_exact
from .summary import StatisticsSummary

__all__ = ["ConditionTotals", "Headline", "SystemHeadline", "headline"]


@dataclass(frozen=True)
class ConditionTotals:
    attempts: int
    passes: int
    delivered: int

    @classmethod
    def of(cls, arms: list[ArmSummary]) -> ConditionTotals:
        return cls(
            attempts=sum(arm.attempts for arm in arms),
            passes=sum(arm.passes for arm in arms),
            delivered=sum(arm.delivered for arm in arms),
        )

    def rate(self, part: int) -> str:
        return f"{part}/{self.attempts}"


@dataclass(frozen=True)
class SystemHeadline:
    """One treatment condition (a memory system on a graph arm) against the control, over its cells."""

    condition: str
    distractors: int  # the distractor pool size its cells ran with
    cells: int
    control: ConditionTotals
    treatment: ConditionTotals
    treatment_only: int  # pairs where only the memory arm passed
    control_only: int

    @property
    def pairs(self) -> int:
        return self.treatment.attempts

    @property
    def effect(self) -> Fraction:
        """The pooled difference in pass rate, treatment minus control, over the admitted pairs."""
        return Fraction(self.treatment_only - self.control_only, self.pairs) if self.pairs else Fraction(0)

    @property
    def mcnemar_p(self) -> Fraction:
        return mcnemar_exact(self.treatment_only, self.control_only)

    def as_json(self) -> dict[str, object]:
        return {
            "condition": self.condition,
            "distractors": self.distractors,
            "cells": self.cells,
            "pairs": self.pairs,
            "control": vars(self.control),
            "treatment": vars(self.treatment),
            "treatment_only": self.treatment_only,
            "control_only": self.control_only,
            "effect": float(self.effect),
            "mcnemar_p": float(self.mcnemar_p),
        }


@dataclass(frozen=True)
class Headline:
    systems: tuple[SystemHeadline, ...]
    exclusions: tuple[ExclusionCount, ...] = ()

    def as_json(self) -> dict[str, object]:
        excluded = [count.model_dump(mode="json") for count in self.exclusions]
        return {"systems": [system.as_json() for system in self.systems], "exclusions": excluded}

    def excluded_lines(self) -> list[str]:
        """Per treatment condition, its excluded pairs by reason."""
        by_condition: dict[str, list[ExclusionCount]] = {}
        for count in self.exclusions:
            by_condition.setdefault(count.condition, []).append(count)
        return [
            f"excluded {condition}: " + ", ".join(f"{count.pairs} {count.reason.value}" for count in counts)
            for condition, counts in by_condition.items()
        ]

    def lines(self) -> list[str]:
        if not self.systems:
            return [
                "no admitted pairs: nothing to summarise (the admissions say why each was excluded)",
                *self.excluded_lines(),
            ]
        several = len({system.distractors for system in self.systems}) > 1
        names = [system.condition + (f"@{system.distractors}" if several else "") for system in self.systems]
        width = max(len(name) for name in names)
        lines = [
            f"{'memory system':<{width}}  pairs  control passes  memory passes  delivered  pooled effect",
        ]
        for name, system in zip(names, self.systems, strict=True):
            control, treatment = system.control, system.treatment
            effect = (
                f"{float(system.effect) * 100:+.0f} points ({system.treatment_only} only with memory, "
                f"{system.control_only} only without; exact McNemar p = {float(system.mcnemar_p):.3g})"
            )
            lines.append(
                f"{name:<{width}}  {system.pairs:>5}  {control.rate(control.passes):>14}  "
                f"{treatment.rate(treatment.passes):>13}  {treatment.rate(treatment.delivered):>9}  {effect}"
            )
        return lines + self.excluded_lines()


def _system(condition: str, distractors: int, cells: list[Cell]) -> SystemHeadline:
    return SystemHeadline(
        condition=condition,
        distractors=distractors,
        cells=len(cells),
        control=ConditionTotals.of([cell.control for cell in cells]),
        treatment=ConditionTotals.of([cell.treatment for cell in cells]),
        treatment_only=sum(cell.paired.treatment_only for cell in cells),
        control_only=sum(cell.paired.control_only for cell in cells),
    )


def headline(summary: StatisticsSummary) -> Headline:
    """Per treatment condition and distractor pool size, in the order the summary's cells first name them; a
    suite run at several pool sizes names the size after the condition (``reference:backfilled@500``)."""
    grouped: dict[tuple[str, int], list[Cell]] = {}
    for cell in summary.cells:
        grouped.setdefault((cell.key.treatment_condition, cell.key.distractors), []).append(cell)
    systems = tuple(_system(condition, size, cells) for (condition, size), cells in grouped.items())
    return Headline(systems, tuple(summary.exclusions))
