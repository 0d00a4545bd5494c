"""Exact power of the paired binary test, and the minimum detectable effect a design can promise.

A design is N pairs (attempts times challenges), tested with the exact two-sided McNemar test at level alpha. Only
discordant pairs carry information: with probability ``p10`` the treatment arm alone passes, with ``p01`` the
reference arm alone. The effect is the difference in pass rates, ``p10 - p01``.

Power by enumeration (:func:`mcnemar_power`): every outcome ``(b, c)`` of the N pairs' discordant counts has its
trinomial probability, the test's decision on it is made exactly (integer tails), and the power is the total
probability of the rejecting outcomes. No normal approximation, no simulation.

The minimum detectable effect (:func:`minimum_detectable_effect`) is the smallest difference in pass rates whose
power passes the target under a stated assumption: no pair favours the reference arm (``p01 = 0``). Then every
discordant pair points the same way, the test rejects exactly when at least ``d*`` pairs are discordant (``d*`` the
smallest d with ``2 * 2**-d <= alpha``), and the power is the binomial tail ``P(D >= d*)``, D ~ Binomial(N, effect),
whose root the intervals' integer bisection finds. A design with fewer than ``d*`` pairs detects nothing at all
(None): one challenge at 5 attempts and alpha 0.05 is such a design (5 of 5 discordant pairs one way give p =
0.0625).

The assumption is a statement, not a bound over every shape of effect: near the bound, from 10 to 40 pairs, adding
discordance both ways to the same difference lowers the power (``tests/analysis/test_power.py`` checks a grid), but
at 6 pairs a little reverse discordance with fewer concordant pairs raises it (the same test shows one such case).
The preregistration therefore names the assumption beside the number.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb

from ..errors import ContractError
from .exact import binomial_tail_root, mcnemar_exact

__all__ = ["critical_discordant", "mcnemar_power", "minimum_detectable_effect"]


def _check_level(name: str, value: Fraction) -> None:
    if not isinstance(value, Fraction) or not 0 < value < 1:
        raise ContractError(f"{name} must be a Fraction strictly between 0 and 1, got {value!r}")


def critical_discordant(alpha: Fraction) -> int:
    """The fewest discordant pairs, all pointing one way, that the exact McNemar test rejects at ``alpha``."""
    _check_level("alpha", alpha)
    needed = 1
    while mcnemar_exact(needed, 0) > alpha:
        needed += 1
    return needed


def _rejecting_below(discordant: int, alpha: Fraction) -> int:
    """The largest ``b`` (-1 when none) such that ``b`` of ``discordant`` rejects; by symmetry so does ``d - b``."""
    smaller = -1
    while smaller + 1 <= discordant // 2 and mcnemar_exact(smaller + 1, discordant - smaller - 1) <= alpha:
        smaller += 1
    return smaller


def mcnemar_power(pairs: int, treatment_only: Fraction, control_only: Fraction, alpha: Fraction) -> Fraction:
    """The exact probability that the two-sided exact McNemar test rejects at ``alpha`` over ``pairs`` pairs.

    ``treatment_only`` and ``control_only`` are the probabilities of the two discordant cells (``p10``, ``p01``);
    every outcome (b, c) is enumerated with its trinomial probability.
    """
    _check_level("alpha", alpha)
    if isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < 0:
        raise ContractError(f"pairs must be a non-negative integer, got {pairs!r}")
    rates = (treatment_only, control_only)
    if not all(isinstance(r, Fraction) and r >= 0 for r in rates) or sum(rates) > 1:
        raise ContractError(f"cell probabilities must be Fractions >= 0 summing to at most 1, got {rates!r}")
    concordant = 1 - treatment_only - control_only
    power = Fraction(0)
    for discordant in range(pairs + 1):
        below = _rejecting_below(discordant, alpha)
        if below < 0:
            continue
        ways = comb(pairs, discordant) * concordant ** (pairs - discordant)
        rejecting = {*range(below + 1), *range(discordant - below, discordant + 1)}
        for b in rejecting:
            c = discordant - b
            power += ways * comb(discordant, b) * treatment_only**b * control_only**c
    return power


def minimum_detectable_effect(pairs: int, alpha: Fraction, power: Fraction) -> Fraction | None:
    """The smallest difference in pass rates detected with probability above ``power`` over ``pairs`` pairs when no
    pair favours the reference arm; None when no effect is detectable at that many pairs."""
    _check_level("power", power)
    return binomial_tail_root(pairs, critical_discordant(alpha), power)
