"""The exact Wilcoxon signed-rank test, its null distribution counted in integers.

Zeros and ties, stated once:
- Zero differences are dropped before ranking (Wilcoxon's own rule, scipy's ``zero_method="wilcox"``): a pair
  with no difference says nothing about its direction. They are counted and reported (``zeros``), and they never
  count toward the five non-zero differences the test needs (:data:`~.exact.EXPLORATORY_BELOW`): it refuses fewer.
- Tied absolute differences get their mid-rank. Ranks are doubled so mid-ranks stay integers, and the null
  distribution is the exact permutation distribution *of those ranks* under random signs (all ``2**n`` sign
  patterns equally likely). With no ties this is the classical Wilcoxon distribution
  (``scipy.stats.wilcoxon(method="exact")``); with ties it is the exact conditional distribution that
  ``scipy.stats.wilcoxon(method=PermutationMethod())`` enumerates for small n.

The distribution is the coefficient list of ``prod_i (1 + x**r_i)``, multiplied out as one big integer whose
digits (wide enough for ``2**n``) are the coefficients, so every step is one shift and one add.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from ..contracts import ContractModel
from ..errors import ContractError
from .exact import EXPLORATORY_BELOW

__all__ = ["SignedRankResult", "doubled_midranks", "signed_rank_test"]


class SignedRankResult(ContractModel):
    """W+ and W- are the rank sums of the positive and negative differences (halves possible under ties)."""

    nonzero: int
    zeros: int  # dropped before ranking
    w_plus: float
    w_minus: float
    p_value: float


@dataclass(frozen=True)
class _Ranked:
    doubled: tuple[int, ...]
    positive: tuple[bool, ...]


def doubled_midranks(magnitudes: Sequence[Fraction]) -> tuple[int, ...]:
    """Twice the mid-rank of each magnitude (1-based ranks), in input order."""
    order = sorted(range(len(magnitudes)), key=lambda i: magnitudes[i])
    doubled = [0] * len(magnitudes)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and magnitudes[order[end + 1]] == magnitudes[order[start]]:
            end += 1
        # Positions start..end (0-based) share ranks start+1..end+1; their mean doubled is start+end+2.
        for position in range(start, end + 1):
            doubled[order[position]] = start + end + 2
        start = end + 1
    return tuple(doubled)


def _rank(differences: Sequence[Fraction]) -> _Ranked:
    nonzero = [d for d in differences if d != 0]
    return _Ranked(doubled_midranks([abs(d) for d in nonzero]), tuple(d > 0 for d in nonzero))


def _null_counts(doubled: Sequence[int]) -> list[int]:
    """How many of the ``2**n`` sign patterns give each doubled W+ (index = doubled W+)."""
    # Each coefficient is at most 2**n, so n+1 bits hold it; round up to whole bytes so the digits can be cut
    # out of one byte string instead of shifting the whole polynomial once per coefficient.
    width_bytes = (len(doubled) + 1 + 7) // 8
    width = 8 * width_bytes
    polynomial = 1
    for rank in doubled:
        polynomial += polynomial << (rank * width)
    terms = sum(doubled) + 1
    digits = polynomial.to_bytes(terms * width_bytes, "little")
    return [int.from_bytes(digits[i * width_bytes : (i + 1) * width_bytes], "little") for i in range(terms)]


def signed_rank_test(differences: Sequence[Fraction]) -> SignedRankResult:
    """Two-sided exact signed-rank test: ``min(1, 2 * min(P(W+ <= w), P(W+ >= w)))`` under random signs.

    Differences are Fractions so equality (zeros and ties) is decided exactly, never by float rounding. Refuses
    fewer than :data:`~.exact.EXPLORATORY_BELOW` non-zero differences, naming how many were zero.
    """
    ranked = _rank(differences)
    n = len(ranked.doubled)
    if n < EXPLORATORY_BELOW:
        raise ContractError(
            f"the signed-rank test needs at least {EXPLORATORY_BELOW} non-zero differences, got {n} of "
            f"{len(differences)} ({len(differences) - n} zero); report the measure as exploratory instead"
        )
    w_plus2 = sum(r for r, pos in zip(ranked.doubled, ranked.positive, strict=True) if pos)
    w_minus2 = sum(ranked.doubled) - w_plus2
    counts = _null_counts(ranked.doubled)
    at_most = sum(counts[: w_plus2 + 1])
    at_least = sum(counts[w_plus2:])
    p_value = min(Fraction(1), Fraction(2 * min(at_most, at_least), 1 << n))
    return SignedRankResult(
        nonzero=n, zeros=len(differences) - n, w_plus=w_plus2 / 2, w_minus=w_minus2 / 2, p_value=float(p_value)
    )
