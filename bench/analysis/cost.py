"""Cost per success: what each arm paid for a pass, and whether memory changes the cost of a pass.

Per arm of a cell (the treatment's memory system, the shared control beside it): the tokens (and, in forward mode,
the dollars) of every arm whose usage the provider reported, divided by the passes among those arms: what one pass
cost, failures included, as the field reports it (tokens per successful task). An arm whose usage was only bounded
(no usage reported, so the gateway charged an upper bound) says nothing about what it used: it is left out of the
totals and counted apart.

The paired test asks whether memory changes the cost of a pass: over the pairs where both arms passed and both
reported their usage, the exact two-sided sign test on the signs of the treatment-minus-control token differences
(zero differences counted and dropped; below five non-zero differences nothing is tested, as every continuous
measure here). In policy mode the stand-in model's tokens are estimates and it spends nothing: the totals are shown
as estimates and nothing is tested.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction

from ..contracts import ContractModel
from .attempt_record import ArmResult, Outcome
from .exact import EXPLORATORY_BELOW, ContinuousStatus, sign_test

__all__ = ["ArmCost", "CostPerPass", "PassCostTest", "arm_cost", "cost_per_pass", "pass_cost_test"]


class ArmCost(ContractModel):
    arms: int  # arms whose usage was reported
    bounded: int  # arms left out: their usage was bounded, not reported
    passes: int  # passes among the reported arms
    tokens: int  # every token of the reported arms
    usd: str | None  # their dollars as the gateway metered them (forward mode); None in policy mode
    tokens_per_pass: float | None  # None: no pass to divide by
    usd_per_pass: str | None  # exact decimal, rounded to micro-dollars; None in policy mode or with no pass


class PassCostTest(ContractModel):
    """Treatment minus control tokens over pairs where both passed with reported usage."""

    status: ContinuousStatus
    pairs: int  # pairs where both arms passed and both reported their usage
    positive: int  # the treatment's pass cost more tokens
    negative: int  # the treatment's pass cost fewer
    zero: int
    median_difference: float | None
    sign_test_p: float | None  # exact, two-sided; None unless tested


class CostPerPass(ContractModel):
    control: ArmCost
    treatment: ArmCost
    paired: PassCostTest


def arm_cost(arms: Sequence[ArmResult], dollars: bool) -> ArmCost:
    """What the arms with reported usage spent, and per pass; bounded ones counted apart."""
    reported = [arm for arm in arms if not arm.usage_bounded]
    passes = sum(arm.outcome is Outcome.PASS for arm in reported)
    tokens = sum(arm.tokens for arm in reported)
    usd = sum((arm.spent_usd for arm in reported), Decimal(0))
    per_pass = None if not passes else (usd / passes).quantize(Decimal("0.000001"))
    return ArmCost(
        arms=len(reported),
        bounded=len(arms) - len(reported),
        passes=passes,
        tokens=tokens,
        usd=str(usd) if dollars else None,
        tokens_per_pass=float(Fraction(tokens, passes)) if passes else None,
        usd_per_pass=str(per_pass) if dollars and per_pass is not None else None,
    )


def pass_cost_test(pairs: Sequence[tuple[ArmResult, ArmResult]], testable: bool) -> PassCostTest:
    """The exact sign test on token differences over the (control, treatment) pairs both passed, usage reported."""
    passed = [
        treatment.tokens - control.tokens
        for control, treatment in pairs
        if control.outcome is Outcome.PASS
        and treatment.outcome is Outcome.PASS
        and not control.usage_bounded
        and not treatment.usage_bounded
    ]
    positive, negative = sum(d > 0 for d in passed), sum(d < 0 for d in passed)
    tested = testable and positive + negative >= EXPLORATORY_BELOW
    status = ContinuousStatus.TESTED if tested else ContinuousStatus.EXPLORATORY
    ordered = sorted(passed)
    middle = len(ordered) // 2
    median = None if not ordered else float(Fraction(ordered[middle] + ordered[~middle], 2))
    return PassCostTest(
        status=status if testable else ContinuousStatus.NOT_TESTED,
        pairs=len(passed),
        positive=positive,
        negative=negative,
        zero=len(passed) - positive - negative,
        median_difference=median if testable else None,
        sign_test_p=float(sign_test(positive, negative)) if tested else None,
    )


def cost_per_pass(pairs: Sequence[tuple[ArmResult, ArmResult]], measured: bool) -> CostPerPass:
    """Both arms' cost per pass and the paired test; ``measured``: forward mode (a real model's own counts)."""
    return CostPerPass(
        control=arm_cost([control for control, _ in pairs], measured),
        treatment=arm_cost([treatment for _, treatment in pairs], measured),
        paired=pass_cost_test(pairs, measured),
    )
