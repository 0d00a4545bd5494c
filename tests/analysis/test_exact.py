"""Exact binomial inference, cross-checked against scipy and statsmodels to 1e-9 on many seeded cases."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from bench.analysis import (
    clopper_pearson,
    conditional_odds_ratio_interval,
    mcnemar_exact,
    sign_test,
    two_sided_binomial_half,
)
from bench.errors import ContractError

TOLERANCE = 1e-9
CONFIDENCES = (Fraction(95, 100), Fraction(90, 100), Fraction(99, 100), Fraction(8, 10))


def _cases(seed: int, count: int, max_n: int) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    cases = [(0, n) for n in (1, 2, 5, 17)] + [(n, n) for n in (1, 2, 5, 17)]
    for _ in range(count):
        n = rng.randint(1, max_n)
        cases.append((rng.randint(0, n), n))
    return cases


@pytest.mark.parametrize("confidence", CONFIDENCES)
def test_clopper_pearson_matches_scipy_and_statsmodels(confidence: Fraction) -> None:
    alpha = float(1 - confidence)
    for k, n in _cases(seed=int(confidence * 100), count=60, max_n=120):
        low, high = clopper_pearson(k, n, confidence)
        scipy_ci = stats.binomtest(k, n).proportion_ci(confidence_level=float(confidence), method="exact")
        sm_low, sm_high = proportion_confint(k, n, alpha=alpha, method="beta")
        assert low == pytest.approx(scipy_ci.low, abs=TOLERANCE), (k, n)
        assert high == pytest.approx(scipy_ci.high, abs=TOLERANCE), (k, n)
        # statsmodels returns nan for the open end at 0/n and n/n, where the exact limit is 0 or 1.
        assert low == pytest.approx(0.0 if k == 0 else sm_low, abs=TOLERANCE), (k, n)
        assert high == pytest.approx(1.0 if k == n else sm_high, abs=TOLERANCE), (k, n)


def test_clopper_pearson_at_the_edges_is_not_degenerate() -> None:
    # A Wald interval collapses to zero width at 0/n and n/n; the exact one keeps the open end.
    low, high = clopper_pearson(0, 5)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 5), abs=1e-12)
    low, high = clopper_pearson(5, 5)
    assert high == 1.0 and low == pytest.approx(0.025 ** (1 / 5), abs=1e-12)
    assert clopper_pearson(0, 0) == (0.0, 1.0)


def test_clopper_pearson_never_narrower_than_exact_root() -> None:
    # The limits are widened outward to the bisection grid: the tail at each limit is <= alpha/2.
    k, n = 7, 23
    low, high = clopper_pearson(k, n)
    assert stats.binom.sf(k - 1, n, low) <= 0.025 + 1e-15
    assert stats.binom.cdf(k, n, high) <= 0.025 + 1e-15


@pytest.mark.parametrize("bad", [(-1, 5), (6, 5), (True, 5), (1.0, 5)])
def test_clopper_pearson_refuses_impossible_counts(bad: tuple[object, object]) -> None:
    with pytest.raises(ContractError, match="k="):
        clopper_pearson(*bad)  # type: ignore[arg-type]


def test_clopper_pearson_refuses_confidence_out_of_range() -> None:
    with pytest.raises(ContractError, match="confidence"):
        clopper_pearson(1, 5, Fraction(1))


def test_binomial_half_matches_scipy_binomtest() -> None:
    for k, n in _cases(seed=7, count=300, max_n=200):
        expected = stats.binomtest(k, n, 0.5).pvalue
        assert float(two_sided_binomial_half(k, n)) == pytest.approx(expected, abs=TOLERANCE), (k, n)
    assert two_sided_binomial_half(0, 0) == 1


def test_mcnemar_matches_statsmodels_exact() -> None:
    rng = random.Random(11)
    for _ in range(300):
        table = [[rng.randint(0, 30), rng.randint(0, 25)], [rng.randint(0, 25), rng.randint(0, 30)]]
        control_only, treatment_only = table[0][1], table[1][0]
        expected = mcnemar(table, exact=True).pvalue
        assert float(mcnemar_exact(treatment_only, control_only)) == pytest.approx(expected, abs=TOLERANCE), table


def test_mcnemar_exact_small_values_are_exact_fractions() -> None:
    assert mcnemar_exact(5, 0) == Fraction(2, 32)
    assert mcnemar_exact(0, 0) == 1
    assert sign_test(3, 3) == 1


def test_conditional_interval_is_clopper_pearson_on_discordant_pairs() -> None:
    rng = random.Random(13)
    for _ in range(80):
        b, c = rng.randint(0, 40), rng.randint(0, 40)
        (low, high), (odds_low, odds_high) = conditional_odds_ratio_interval(b, c)
        if b + c == 0:
            assert (low, high, odds_low, odds_high) == (0.0, 1.0, 0.0, None)
            continue
        sm_low, sm_high = proportion_confint(b, b + c, alpha=0.05, method="beta")
        assert low == pytest.approx(0.0 if b == 0 else sm_low, abs=TOLERANCE)
        assert high == pytest.approx(1.0 if c == 0 else sm_high, abs=TOLERANCE)
        assert odds_low == pytest.approx(low / (1 - low), rel=1e-12)
        if c == 0:
            assert odds_high is None  # no pair favoured control: unbounded above
        else:
            assert odds_high == pytest.approx(high / (1 - high), rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(min_value=1, max_value=80))
def test_clopper_pearson_contains_estimate_and_mirrors(data: st.DataObject, n: int) -> None:
    k = data.draw(st.integers(min_value=0, max_value=n))
    low, high = clopper_pearson(k, n)
    assert low <= k / n <= high
    mirror_low, mirror_high = clopper_pearson(n - k, n)
    # Swapping successes and failures mirrors the interval (up to the 2**-50 grid).
    assert low == pytest.approx(1 - mirror_high, abs=1e-14) and high == pytest.approx(1 - mirror_low, abs=1e-14)


def test_sign_test_refuses_fewer_than_five_nonzero_differences() -> None:
    with pytest.raises(ContractError, match=r"at least 5 non-zero differences, got 4 \(3 positive, 1 negative\)"):
        sign_test(3, 1)
    assert sign_test(5, 0) == Fraction(2, 32)
