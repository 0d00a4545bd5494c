"""Exact binomial inference: integer combinatorics and fractions, no sampling, no normal approximation.

Small samples are where textbook approximations fail (a Wald interval at 0/n claims certainty from five
observations), so every number here comes from an exact binomial tail. Tails are compared as integers: with
``p = m / 2**b`` the tail ``sum C(n, i) p**i (1-p)**(n-i)`` is ``S / 2**(b*n)`` for an integer ``S``, so each
bisection step decides exactly which side of the target the tail lies on.
"""

from __future__ import annotations

from enum import StrEnum
from fractions import Fraction
from math import comb

from ..errors import ContractError

__all__ = [
    "BISECTION_BITS",
    "EXPLORATORY_BELOW",
    "ContinuousStatus",
    "binomial_tail_root",
    "clopper_pearson",
    "conditional_odds_ratio_interval",
    "mcnemar_exact",
    "sign_test",
    "two_sided_binomial_half",
]

# The bisection stops at a bracket of width 2**-50 (< 1e-15), far inside the 1e-12 the receipts promise, and
# 50-bit numerators convert to float without rounding.
BISECTION_BITS = 50
# Below five non-zero paired differences a test of a continuous measure is noise wearing a decimal point: the sign
# and signed-rank tests refuse fewer, and the summary reports such a measure as exploratory. Zero differences never
# count toward the five (they say nothing about direction; five pairs with four ties are one difference).
EXPLORATORY_BELOW = 5


class ContinuousStatus(StrEnum):
    """What was done with a continuous measure's paired differences."""

    EXPLORATORY = "exploratory"  # fewer than EXPLORATORY_BELOW non-zero differences: no test computed
    TESTED = "tested"
    NOT_TESTED = "not-tested"  # a policy-mode estimate (tokens) or nothing spent (dollars): no test means anything


def _check_counts(k: int, n: int) -> None:
    if isinstance(k, bool) or isinstance(n, bool) or not isinstance(k, int) or not isinstance(n, int):
        raise ContractError(f"binomial counts must be integers, got k={k!r}, n={n!r}")
    if n < 0 or not 0 <= k <= n:
        raise ContractError(f"binomial counts must satisfy 0 <= k <= n, got k={k}, n={n}")


def _alpha_half(confidence: Fraction) -> Fraction:
    if not isinstance(confidence, Fraction) or not 0 < confidence < 1:
        raise ContractError(f"confidence must be a Fraction strictly between 0 and 1, got {confidence!r}")
    return (1 - confidence) / 2


def _tail_numerator(n: int, first: int, last: int, m: int, r: int) -> int:
    """``sum_{i=first..last} C(n, i) m**i r**(n-i)`` with 0 < m, r.

    The power product is carried from one term to the next by one multiply and one exact divide by a small
    integer, so each step costs linear time in the size of the numbers instead of a big-by-big multiply.
    """
    power = m**first * r ** (n - first)
    coefficient = comb(n, first)
    total = 0
    for i in range(first, last + 1):
        total += coefficient * power
        if i < last:
            power = power * m // r
            coefficient = coefficient * (n - i) // (i + 1)
    return total


def _bisect(n: int, k: int, target: Fraction, upper_tail: bool) -> int:
    """``m`` such that the root of ``tail(p) = target`` lies in ``[m, m + 1] / 2**b``.

    ``upper_tail``: the tail is ``P(X >= k; p)``, rising in p (gives the lower limit); otherwise it is
    ``P(X <= k; p)``, falling in p (gives the upper limit). The endpoints 0 and ``2**b`` are never evaluated
    (the tail there is 0 or 1 and known).
    """
    scale = 1 << BISECTION_BITS
    low, high = 0, scale
    for _ in range(BISECTION_BITS):
        mid = (low + high) // 2
        first, last = (k, n) if upper_tail else (0, k)
        tail = _tail_numerator(n, first, last, mid, scale - mid)
        # tail / scale**n  <=  target.numerator / target.denominator, decided in integers.
        below = tail * target.denominator <= target.numerator * scale**n
        if below == upper_tail:
            low = mid
        else:
            high = mid
    return low


def _clopper_pearson_exact(k: int, n: int, confidence: Fraction) -> tuple[Fraction, Fraction]:
    _check_counts(k, n)
    target = _alpha_half(confidence)
    scale = 1 << BISECTION_BITS
    lower = Fraction(0) if k == 0 else Fraction(_bisect(n, k, target, upper_tail=True), scale)
    upper = Fraction(1) if k == n else Fraction(_bisect(n, k, target, upper_tail=False) + 1, scale)
    return lower, upper


def clopper_pearson(k: int, n: int, confidence: Fraction = Fraction(95, 100)) -> tuple[float, float]:
    """The exact (Clopper-Pearson, 1934) two-sided interval for a binomial proportion from ``k`` of ``n``.

    The lower limit solves ``P(X >= k; p) = alpha/2`` and is 0 at k = 0; the upper limit solves
    ``P(X <= k; p) = alpha/2`` and is 1 at k = n. Each limit is widened outward to the 2**-50 grid, so the
    interval is never narrower than the exact one. With no observations (n = 0) the interval is all of [0, 1].
    """
    lower, upper = _clopper_pearson_exact(k, n, confidence)
    return float(lower), float(upper)


def two_sided_binomial_half(k: int, n: int) -> Fraction:
    """The exact two-sided p-value of ``k`` successes in ``n`` trials under p = 1/2.

    The null is symmetric, so "as or less likely than observed" is exactly both tails beyond ``min(k, n-k)``:
    ``min(1, 2 * P(X <= min(k, n-k)))``. This is ``scipy.stats.binomtest(k, n, 0.5)`` and statsmodels'
    ``mcnemar(exact=True)``.
    """
    _check_counts(k, n)
    if n == 0:
        return Fraction(1)
    smaller = min(k, n - k)
    tail = sum(comb(n, i) for i in range(smaller + 1))
    return min(Fraction(1), Fraction(2 * tail, 1 << n))


def mcnemar_exact(treatment_only: int, control_only: int) -> Fraction:
    """Exact McNemar test: the discordant pairs, under no effect, split as a fair coin.

    Concordant pairs carry no information about the difference between arms, so only the discordant counts
    enter. Two-sided, as ``statsmodels.stats.contingency_tables.mcnemar(table, exact=True)``.
    """
    _check_counts(treatment_only, treatment_only + control_only)
    return two_sided_binomial_half(treatment_only, treatment_only + control_only)


def sign_test(positive: int, negative: int) -> Fraction:
    """Exact two-sided sign test on the signs of paired differences (zero differences dropped beforehand).

    Refuses fewer than :data:`EXPLORATORY_BELOW` non-zero differences: the caller reports those as exploratory.
    """
    _check_counts(positive, positive + negative)
    if positive + negative < EXPLORATORY_BELOW:
        raise ContractError(
            f"the sign test needs at least {EXPLORATORY_BELOW} non-zero differences, got {positive + negative} "
            f"({positive} positive, {negative} negative); report the measure as exploratory instead"
        )
    return mcnemar_exact(positive, negative)


def binomial_tail_root(n: int, k: int, target: Fraction) -> Fraction | None:
    """The smallest ``p`` on the 2**-50 grid with ``P(X >= k; n, p) > target``, X ~ Binomial(n, p).

    The tail rises from 0 to 1 in p (for 1 <= k <= n), so the root is found by the same integer bisection as the
    intervals. None when no p reaches it: k > n, where the tail is 0 everywhere. Used for exact power: the
    smallest effect whose rejection probability passes a target.
    """
    _check_counts(min(k, n), n)
    if not 0 < target < 1:
        raise ContractError(f"the target probability must lie strictly between 0 and 1, got {target}")
    if k > n:
        return None
    if k <= 0:
        return Fraction(0)
    return Fraction(_bisect(n, k, target, upper_tail=True) + 1, 1 << BISECTION_BITS)


def conditional_odds_ratio_interval(
    treatment_only: int, control_only: int, confidence: Fraction = Fraction(95, 100)
) -> tuple[tuple[float, float], tuple[float, float | None]]:
    """Exact conditional interval for the paired effect, as (discordant share, conditional odds ratio).

    Method: the exact conditional (transformed Clopper-Pearson) interval for the matched-pairs odds ratio;
    Breslow & Day (1980), *Statistical Methods in Cancer Research* vol. I (analysis of matched pairs), and Fagerland,
    Lydersen & Laake (2014), "Recommended tests and confidence intervals for paired binomial proportions",
    *Statistics in Medicine* 33:2850-2875.

    Why it is exact: given the number of discordant pairs ``d = b + c``, the count ``b`` of pairs only the
    treatment arm passed is exactly Binomial(d, pi) with ``pi = p10 / (p10 + p01)``; no nuisance parameter
    remains. A Clopper-Pearson interval for ``pi`` therefore covers with probability >= the confidence for every
    ``d``, hence unconditionally too, and the monotone map ``psi = pi / (1 - pi)`` carries it to the
    conditional odds ratio (psi > 1 favours the treatment arm). The paired *difference* p1 - p2 has no such
    pivot (it depends on the discordance rate), so no exact small-sample interval for it is claimed here.
    An upper limit of ``None`` means unbounded (pi's upper limit is 1 when no pair favours control).
    """
    low, high = _clopper_pearson_exact(treatment_only, treatment_only + control_only, confidence)
    odds_high = None if high == 1 else float(high / (1 - high))
    return (float(low), float(high)), (float(low / (1 - low)), odds_high)
