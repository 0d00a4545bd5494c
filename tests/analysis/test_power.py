"""Exact power and the minimum detectable effect, against scipy's distributions and statsmodels' exact test."""

from __future__ import annotations

from fractions import Fraction

import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from bench.analysis.power import critical_discordant, mcnemar_power, minimum_detectable_effect
from bench.errors import ContractError

ALPHA = Fraction(5, 100)


def _statsmodels_power(pairs: int, p10: float, p01: float, alpha: float) -> float:
    """Sum the multinomial probability of every (b, c, rest) outcome statsmodels' exact McNemar rejects."""
    power = 0.0
    for b in range(pairs + 1):
        for c in range(pairs + 1 - b):
            if mcnemar([[0, c], [b, 0]], exact=True).pvalue <= alpha:
                power += stats.multinomial.pmf([b, c, pairs - b - c], pairs, [p10, p01, 1 - p10 - p01])
    return power


@pytest.mark.parametrize(
    ("pairs", "p10", "p01"), [(8, "1/4", "0"), (12, "3/10", "1/10"), (15, "1/5", "1/5"), (6, "1", "0")]
)
def test_power_matches_an_enumeration_with_statsmodels_decisions(pairs: int, p10: str, p01: str) -> None:
    ours = mcnemar_power(pairs, Fraction(p10), Fraction(p01), ALPHA)
    assert float(ours) == pytest.approx(
        _statsmodels_power(pairs, float(Fraction(p10)), float(Fraction(p01)), 0.05), abs=1e-12
    )


def test_critical_count_and_a_design_that_detects_nothing() -> None:
    assert critical_discordant(ALPHA) == 6  # 2 / 2**5 = 0.0625 > 0.05 >= 2 / 2**6
    assert critical_discordant(Fraction(1, 100)) == 8
    # One challenge at five attempts can never reject at 0.05, however large the effect.
    assert minimum_detectable_effect(5, ALPHA, Fraction(8, 10)) is None
    assert mcnemar_power(5, Fraction(1), Fraction(0), ALPHA) == 0


@pytest.mark.parametrize("pairs", [6, 10, 25, 40])
def test_minimum_detectable_effect_is_where_power_crosses_the_target(pairs: int) -> None:
    target = Fraction(8, 10)
    effect = minimum_detectable_effect(pairs, ALPHA, target)
    assert effect is not None
    needed = critical_discordant(ALPHA)
    # At the bound the power passes the target; a hair below it does not (scipy's binomial tail).
    assert stats.binom.sf(needed - 1, pairs, float(effect)) > 0.8 - 1e-12
    assert stats.binom.sf(needed - 1, pairs, float(effect) - 1e-9) < 0.8
    assert mcnemar_power(pairs, effect, Fraction(0), ALPHA) > target


def test_reverse_discordance_near_the_bound_lowers_power_from_ten_pairs_but_not_at_six() -> None:
    # What the stated assumption (no pair favours the reference arm) means, shown rather than claimed.
    target = Fraction(8, 10)
    for pairs in (10, 20, 40):
        effect = minimum_detectable_effect(pairs, ALPHA, target)
        assert effect is not None
        stated = mcnemar_power(pairs, effect, Fraction(0), ALPHA)
        for extra in (Fraction(1, 200), Fraction(1, 50), Fraction(1, 10)):
            if effect + 2 * extra <= 1:
                assert mcnemar_power(pairs, effect + extra, extra, ALPHA) < stated, (pairs, extra)
    # At six pairs only 6 of 6 one way rejects; fewer concordant pairs outweigh a little reverse discordance.
    effect = minimum_detectable_effect(6, ALPHA, target)
    assert effect is not None
    extra = Fraction(3, 200)
    assert mcnemar_power(6, effect + extra, extra, ALPHA) > mcnemar_power(6, effect, Fraction(0), ALPHA)


def test_refuses_levels_outside_zero_one() -> None:
    with pytest.raises(ContractError, match="alpha must be a Fraction strictly between 0 and 1"):
        critical_discordant(Fraction(0))
    with pytest.raises(ContractError, match="power must be"):
        minimum_detectable_effect(10, ALPHA, Fraction(1))
    with pytest.raises(ContractError, match="cell probabilities"):
        mcnemar_power(10, Fraction(7, 10), Fraction(4, 10), ALPHA)
