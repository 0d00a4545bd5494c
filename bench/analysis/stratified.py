"""The pooled paired effect across challenges: an exact stratified test of a common odds ratio, and its interval.

Attempts of one challenge are not independent the way attempts of different challenges are (a challenge is easy or
hard for both arms), so the challenges are strata and nothing pools their pairs as if they were one sample of
attempts. The analysis conditions on each stratum's discordant pairs: given ``n_k = b_k + c_k`` discordant pairs in
stratum k, the count ``b_k`` favouring the treatment is Binomial(n_k, pi_k), ``pi_k = psi_k / (1 + psi_k)`` with
``psi_k`` the stratum's conditional (matched-pairs) odds ratio. Concordant pairs and each stratum's own pass rate
drop out: that is what conditioning buys.

Under a common odds ratio psi across strata (the Mantel-Haenszel setting), the conditional likelihood is the
product of the strata's binomials, ``pi**B (1 - pi)**C`` times constants, with ``B = sum b_k`` and ``C = sum c_k``.
So B is sufficient for psi, and its exact conditional distribution given every ``n_k`` is the convolution of the
strata's binomials: Binomial(N, pi) with ``N = sum n_k``. Hence, exactly:

- the conditional test of psi = 1 is the two-sided binomial test of B in N at one half;
- the conditional interval for psi is the Clopper-Pearson interval of pi from (B, N), mapped by ``pi / (1 - pi)``;
- the conditional maximum-likelihood estimate is B / C, which is also the Mantel-Haenszel estimate for matched
  pairs (Breslow & Day 1980, *Statistical Methods in Cancer Research* I, ch. 7; Agresti 2013, *Categorical Data
  Analysis*, 11.2).

``tests/analysis/test_stratified.py`` checks all three against an independent computation that enumerates every
outcome of every stratum (the product of the per-stratum binomials) and finds the interval's limits by root-finding
on that enumeration, and the estimate against statsmodels' Mantel-Haenszel pooled odds ratio.

A common effect can still come from one challenge. So each stratum's direction is reported too (how many challenges
favour either arm, how many neither), with the exact sign test over the challenges' directions once at least five
challenges point somewhere: whether the effect holds across challenges rather than within one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from ..errors import ContractError
from .exact import EXPLORATORY_BELOW, conditional_odds_ratio_interval, mcnemar_exact, sign_test

__all__ = ["Directions", "StratifiedTest", "stratified_exact"]


@dataclass(frozen=True)
class Directions:
    """How many strata favour each arm (more discordant pairs its way), and how many neither."""

    treatment: int
    reference: int
    neither: int

    @property
    def sign_test_p(self) -> Fraction | None:
        """The exact sign test over the strata's directions; None below five directed strata (exploratory)."""
        if self.treatment + self.reference < EXPLORATORY_BELOW:
            return None
        return sign_test(self.treatment, self.reference)


@dataclass(frozen=True)
class StratifiedTest:
    treatment_only: int  # B: discordant pairs favouring the treatment, over all strata
    reference_only: int  # C: those favouring the reference arm
    p_value: Fraction  # exact conditional two-sided test of a common odds ratio of 1
    share: tuple[float, float]  # exact interval of pi, the common share of discordant pairs favouring treatment
    odds_ratio: tuple[float, float | None]  # the same interval for psi; None above means unbounded
    estimate: Fraction | None  # conditional MLE of psi, B / C; None when C = 0 (unbounded)
    directions: Directions


def stratified_exact(strata: Sequence[tuple[int, int]], confidence: Fraction) -> StratifiedTest:
    """The exact conditional test and interval of a common odds ratio over strata of matched pairs.

    ``strata`` holds each stratum's discordant counts ``(b_k, c_k)``: pairs only the treatment passed and pairs only
    the reference arm passed.
    """
    for index, (b, c) in enumerate(strata):
        if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in (b, c)):
            raise ContractError(f"stratum {index}: discordant counts must be integers >= 0, got ({b!r}, {c!r})")
    total_b = sum(b for b, _ in strata)
    total_c = sum(c for _, c in strata)
    share, odds = conditional_odds_ratio_interval(total_b, total_c, confidence)
    return StratifiedTest(
        treatment_only=total_b,
        reference_only=total_c,
        p_value=mcnemar_exact(total_b, total_c),
        share=share,
        odds_ratio=odds,
        estimate=None if total_c == 0 else Fraction(total_b, total_c),
        directions=Directions(
            treatment=sum(b > c for b, c in strata),
            reference=sum(c > b for b, c in strata),
            neither=sum(b == c for b, c in strata),
        ),
    )
