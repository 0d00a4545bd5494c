"""The headline of a statistics summary: per condition passes and deliveries, and the pooled paired effect.

What a run's last lines say. The summary's cells stay the unit of inference (each comparability key and build
apart); the headline adds them up across cells for one glance, and says so: the pooled effect is the count of
pairs that passed only with memory against those that passed only without, with the exact McNemar test on those
discordant counts. Admitted pairs only, as the summary itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .exact import mcnemar_exact
from .summary import ArmSummary, StatisticsSummary

__all__ = ["ConditionTotals", "Headline", "headline"]


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


@dataclass(frozen=True)
class Headline:
    cells: int
    pairs: int
    control: ConditionTotals
    treatment: ConditionTotals
    treatment_only: int  # pairs where only the memory arm passed
    control_only: int
    mcnemar_p: Fraction

    @property
    def effect(self) -> Fraction:
        """The pooled difference in pass rate, treatment minus control, over the admitted pairs."""
        return Fraction(self.treatment_only - self.control_only, self.pairs) if self.pairs else Fraction(0)

    def as_json(self) -> dict[str, object]:
        return {
            "cells": self.cells,
            "pairs": self.pairs,
            "control": vars(self.control),
            "treatment": vars(self.treatment),
            "treatment_only": self.treatment_only,
            "control_only": self.control_only,
            "effect": float(self.effect),
            "mcnemar_p": float(self.mcnemar_p),
        }

    def lines(self) -> list[str]:
        if not self.pairs:
            return ["no admitted pairs: nothing to summarise (the admissions say why each was excluded)"]
        rows = [("control", self.control), ("treatment", self.treatment)]
        width = max(len(str(self.pairs)) * 2 + 1, len("passes"))
        table = [f"  {'condition':<10} {'passes':>{width}}  {'memory delivered':>{width}}"]
        table += [
            f"  {name:<10} {f'{t.passes}/{t.attempts}':>{width}}  {f'{t.delivered}/{t.attempts}':>{width}}"
            for name, t in rows
        ]
        effect = float(self.effect) * 100
        return [
            f"{self.pairs} admitted pairs over {self.cells} challenge cells:",
            *table,
            f"  pooled effect: {effect:+.0f} points; {self.treatment_only} pairs passed only with memory, "
            f"{self.control_only} only without (exact McNemar p = {float(self.mcnemar_p):.3g})",
        ]


def headline(summary: StatisticsSummary) -> Headline:
    cells = summary.cells
    treatment_only = sum(cell.paired.treatment_only for cell in cells)
    control_only = sum(cell.paired.control_only for cell in cells)
    pairs = sum(
        cell.paired.both_pass + cell.paired.treatment_only + cell.paired.control_only + cell.paired.neither
        for cell in cells
    )
    return Headline(
        cells=len(cells),
        pairs=pairs,
        control=ConditionTotals.of([cell.control for cell in cells]),
        treatment=ConditionTotals.of([cell.treatment for cell in cells]),
        treatment_only=treatment_only,
        control_only=control_only,
        mcnemar_p=mcnemar_exact(treatment_only, control_only),
    )
