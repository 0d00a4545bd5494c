"""Two arms over matched attempts: the exact paired binary comparison, and what its design could detect.

Every comparison in the summary (a system against the shared control in one challenge, a system against the
static-context baseline, the pooled effect across challenges) says what it found and, beside it, the smallest
effect its design could have found (:class:`PowerStatement`): at the preregistered attempts and at the admitted
ones. A null result whose design could detect nothing, or less than it promised, is marked underpowered, so a
report never presents "no difference" where the truth is "could not have told".
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from ..contracts import ContractModel
from .attempt_record import ArmResult, Outcome
from .exact import conditional_odds_ratio_interval, mcnemar_exact
from .power import minimum_detectable_effect

__all__ = [
    "DesignPower",
    "Interval",
    "PairedBinary",
    "PowerStatement",
    "design_power",
    "paired_binary",
    "power_statement",
]


class Interval(ContractModel):
    """A two-sided interval; ``high`` None means unbounded above."""

    low: float
    high: float | None


class PairedBinary(ContractModel):
    """Outcomes of matched pairs. ``control`` is the comparison's reference arm: the shared control arm, or the
    baseline's arm in a comparison against the static-context baseline."""

    both_pass: int
    treatment_only: int
    control_only: int
    neither: int
    mcnemar_p: float
    discordant_share: Interval
    odds_ratio: Interval


class DesignPower(ContractModel):
    """How many pairs, and the smallest difference in pass rates they detect with the target power when no pair
    favours the reference arm (:func:`~.power.minimum_detectable_effect`); None: no effect is detectable at all."""

    pairs: int
    minimum_detectable_effect: float | None


class PowerStatement(ContractModel):
    target_power: str  # as preregistered, e.g. "0.8"
    alpha: str  # the test's level, 1 - confidence
    planned: DesignPower | None  # at the preregistered attempts; None when no preregistration was given
    admitted: DesignPower  # at the pairs actually admitted
    significant: bool  # the exact test rejected at alpha
    # Nothing found, and the design could not have found much: no effect was detectable at the admitted pairs, or
    # fewer pairs were admitted than were planned (so less than the preregistered effect was within reach).
    underpowered: bool


def paired_binary(pairs: Sequence[tuple[ArmResult, ArmResult]], confidence: Fraction) -> PairedBinary:
    """Counts, exact McNemar test and exact conditional intervals of ``(reference, treatment)`` pairs."""
    cells = [(c.outcome is Outcome.PASS, t.outcome is Outcome.PASS) for c, t in pairs]
    treatment_only = cells.count((False, True))
    control_only = cells.count((True, False))
    share, odds = conditional_odds_ratio_interval(treatment_only, control_only, confidence)
    return PairedBinary(
        both_pass=cells.count((True, True)),
        treatment_only=treatment_only,
        control_only=control_only,
        neither=cells.count((False, False)),
        mcnemar_p=float(mcnemar_exact(treatment_only, control_only)),
        discordant_share=Interval(low=share[0], high=share[1]),
        odds_ratio=Interval(low=odds[0], high=odds[1]),
    )


def design_power(pairs: int, alpha: Fraction, power: Fraction) -> DesignPower:
    """What ``pairs`` pairs detect at level ``alpha`` with probability above ``power``."""
    effect = minimum_detectable_effect(pairs, alpha, power)
    return DesignPower(pairs=pairs, minimum_detectable_effect=None if effect is None else float(effect))


def power_statement(
    p_value: Fraction, admitted_pairs: int, planned_pairs: int | None, confidence: Fraction, target_power: str
) -> PowerStatement:
    """The design's power beside a test's result (``p_value``), at the planned and the admitted pairs."""
    alpha = 1 - confidence
    power = Fraction(target_power)
    admitted = design_power(admitted_pairs, alpha, power)
    planned = None if planned_pairs is None else design_power(planned_pairs, alpha, power)
    significant = p_value <= alpha
    short = planned is not None and admitted_pairs < planned.pairs
    return PowerStatement(
        target_power=target_power,
        alpha=str(float(alpha)),
        planned=planned,
        admitted=admitted,
        significant=significant,
        underpowered=not significant and (admitted.minimum_detectable_effect is None or short),
    )
