"""The exact signed-rank test against scipy: the classical exact law without ties, the permutation law with."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from scipy import stats

from bench.analysis import signed_rank_test
from bench.analysis.signed_rank import doubled_midranks
from bench.errors import ContractError


def test_matches_scipy_exact_without_ties_or_zeros() -> None:
    rng = random.Random(3)
    for _ in range(250):
        n = rng.randint(5, 30)
        diffs = [m * rng.choice((-1, 1)) for m in rng.sample(range(1, 200), n)]
        ours = signed_rank_test([Fraction(d) for d in diffs])
        theirs = stats.wilcoxon(diffs, method="exact")
        assert ours.p_value == pytest.approx(theirs.pvalue, abs=1e-9), diffs
        assert min(ours.w_plus, ours.w_minus) == theirs.statistic


def test_matches_scipy_exact_permutation_with_ties_and_zeros() -> None:
    # scipy enumerates all 2**n sign flips for n <= 13 (n <= 10 here, for speed): PermutationMethod is exact.
    rng = random.Random(5)
    checked = 0
    for _ in range(150):
        diffs = [rng.randint(-4, 4) for _ in range(rng.randint(5, 10))]
        if sum(d != 0 for d in diffs) < 5:
            continue
        ours = signed_rank_test([Fraction(d) for d in diffs])
        theirs = stats.wilcoxon(diffs, method=stats.PermutationMethod())
        assert ours.p_value == pytest.approx(theirs.pvalue, abs=1e-9), diffs
        checked += 1
    assert checked > 100


def test_zeros_are_dropped_counted_and_reported() -> None:
    diffs = [Fraction(d) for d in (0, 3, -1, 0, 2, 5, 4)]
    result = signed_rank_test(diffs)
    assert (result.nonzero, result.zeros) == (5, 2) and (result.w_plus, result.w_minus) == (14.0, 1.0)
    theirs = stats.wilcoxon([3, -1, 2, 5, 4], method="exact")
    assert result.p_value == pytest.approx(theirs.pvalue, abs=1e-12)


def test_refuses_fewer_than_five_nonzero_differences_whatever_the_zeros() -> None:
    # Five pairs with four ties are one difference: the zeros never count toward the five.
    with pytest.raises(ContractError, match=r"at least 5 non-zero differences, got 1 of 5 \(4 zero\)"):
        signed_rank_test([Fraction(0)] * 4 + [Fraction(2)])
    with pytest.raises(ContractError, match="got 0 of 4"):
        signed_rank_test([Fraction(0)] * 4)
    with pytest.raises(ContractError, match="got 3 of 3"):
        signed_rank_test([Fraction(1), Fraction(2), Fraction(3)])


def test_midranks_are_doubled_integers() -> None:
    assert doubled_midranks([Fraction(5), Fraction(1), Fraction(5), Fraction(3)]) == (7, 2, 7, 4)


def test_float_differences_tie_only_when_exactly_equal() -> None:
    # 0.1 + 0.2 != 0.3 in binary floating point; Fractions of the recorded floats keep that distinction.
    a = Fraction(0.1) + Fraction(0.2)
    b = Fraction(0.3)
    assert doubled_midranks([a, b]) in ((2, 4), (4, 2))
