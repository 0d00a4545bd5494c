"""The pooled effect across challenges against an independent computation that enumerates every stratum.

The independent side never uses the sufficiency argument the implementation rests on: it convolves the strata's
own conditional binomials outcome by outcome, finds the interval's limits by root-finding (scipy's brentq) on that
enumeration, and takes the estimate from statsmodels' Mantel-Haenszel pooled odds ratio over one 2x2 table per
matched pair.
"""

from __future__ import annotations

import random
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from scipy.optimize import brentq
from statsmodels.stats.contingency_tables import StratifiedTable

from bench.analysis.stratified import stratified_exact
from bench.errors import ContractError

# A table of cases: each row is one suite's strata, (b_k, c_k) discordant pairs per challenge.
CASES = [
    [(3, 0), (2, 1), (4, 0)],
    [(0, 0), (5, 1), (1, 1), (2, 0)],
    [(1, 4), (0, 3), (2, 2)],
    [(6, 0)],
    [(0, 2), (3, 0), (0, 0), (4, 1), (2, 2), (1, 0)],
    [(7, 3), (5, 6)],
    [(0, 0), (0, 0)],
    [(1, 0), (1, 0), (1, 0), (1, 0), (1, 0), (0, 1)],
]


def _convolved(strata: list[tuple[int, int]], pi: Fraction) -> dict[int, Fraction]:
    """The distribution of B = sum b_k given each stratum's n_k, stratum by stratum (no closed form used)."""
    law = {0: Fraction(1)}
    for b, c in strata:
        n = b + c
        own = {k: comb(n, k) * pi**k * (1 - pi) ** (n - k) for k in range(n + 1)}
        merged: dict[int, Fraction] = {}
        for total, p in law.items():
            for k, q in own.items():
                merged[total + k] = merged.get(total + k, Fraction(0)) + p * q
        law = merged
    return law


def _independent_p(strata: list[tuple[int, int]]) -> Fraction:
    law = _convolved(strata, Fraction(1, 2))
    observed = sum(b for b, _ in strata)
    lower = sum(p for k, p in law.items() if k <= observed)
    upper = sum(p for k, p in law.items() if k >= observed)
    return min(Fraction(1), 2 * min(lower, upper))


def _tail(strata: list[tuple[int, int]], pi: float, upper: bool) -> float:
    observed = sum(b for b, _ in strata)
    law = _convolved(strata, Fraction(pi))
    return float(sum(p for k, p in law.items() if (k >= observed if upper else k <= observed)))


def _independent_share(strata: list[tuple[int, int]], alpha: float) -> tuple[float, float]:
    observed = sum(b for b, _ in strata)
    total = sum(b + c for b, c in strata)
    low = 0.0 if observed == 0 else brentq(lambda p: _tail(strata, p, True) - alpha / 2, 1e-12, 1 - 1e-12, xtol=1e-14)
    high = (
        1.0
        if observed == total
        else brentq(lambda p: _tail(strata, p, False) - alpha / 2, 1e-12, 1 - 1e-12, xtol=1e-14)
    )
    return low, high


def _mantel_haenszel(strata: list[tuple[int, int]]) -> float:
    """statsmodels' pooled odds ratio, one 2x2 table per discordant pair (concordant pairs carry no weight)."""
    tables = [np.array([[1, 0], [0, 1]])] * sum(b for b, _ in strata)
    tables += [np.array([[0, 1], [1, 0]])] * sum(c for _, c in strata)
    return float(StratifiedTable(tables).oddsratio_pooled)


@pytest.mark.parametrize("strata", CASES)
def test_pooled_test_and_interval_match_stratum_by_stratum_enumeration(strata: list[tuple[int, int]]) -> None:
    ours = stratified_exact(strata, Fraction(95, 100))
    assert ours.p_value == _independent_p(strata)
    total = sum(b + c for b, c in strata)
    if total == 0:
        assert ours.share == (0.0, 1.0) and ours.odds_ratio == (0.0, None)
        return
    low, high = _independent_share(strata, 0.05)
    assert ours.share[0] == pytest.approx(low, abs=1e-9)
    assert ours.share[1] == pytest.approx(high, abs=1e-9)
    odds_high = None if high == 1.0 else high / (1 - high)
    assert ours.odds_ratio[0] == pytest.approx(low / (1 - low), abs=1e-9)
    assert ours.odds_ratio[1] == (None if odds_high is None else pytest.approx(odds_high, rel=1e-9))


@pytest.mark.parametrize("strata", [s for s in CASES if sum(b for b, _ in s) and sum(c for _, c in s)])
def test_estimate_is_the_mantel_haenszel_pooled_odds_ratio(strata: list[tuple[int, int]]) -> None:
    ours = stratified_exact(strata, Fraction(95, 100))
    assert ours.estimate is not None
    assert float(ours.estimate) == pytest.approx(_mantel_haenszel(strata), rel=1e-12)


def test_random_suites_match_enumeration() -> None:
    rng = random.Random(20)
    for _ in range(40):
        strata = [(rng.randint(0, 5), rng.randint(0, 5)) for _ in range(rng.randint(1, 5))]
        assert stratified_exact(strata, Fraction(9, 10)).p_value == _independent_p(strata), strata


def test_directions_count_challenges_and_test_them_only_from_five() -> None:
    four_up = stratified_exact([(2, 0), (1, 0), (3, 1), (2, 0), (1, 1)], Fraction(95, 100)).directions
    assert (four_up.treatment, four_up.reference, four_up.neither) == (4, 0, 1)
    assert four_up.sign_test_p is None  # four directed challenges: exploratory
    five_up = stratified_exact([(2, 0)] * 5 + [(0, 0)], Fraction(95, 100)).directions
    assert five_up.sign_test_p == Fraction(2, 32)


def test_one_challenge_cannot_carry_the_pooled_effect_unseen() -> None:
    # Pooled, 12 of 13 discordant pairs favour the treatment; but they all come from one challenge.
    result = stratified_exact([(12, 0), (0, 1)], Fraction(95, 100))
    assert result.p_value < Fraction(1, 100)
    assert (result.directions.treatment, result.directions.reference) == (1, 1)


def test_refuses_negative_or_non_integer_counts() -> None:
    with pytest.raises(ContractError, match=r"stratum 1: discordant counts must be integers >= 0"):
        stratified_exact([(1, 0), (-1, 2)], Fraction(95, 100))
    with pytest.raises(ContractError, match="stratum 0"):
        stratified_exact([(True, 0)], Fraction(95, 100))  # type: ignore[list-item]
