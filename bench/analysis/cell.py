"""A cell of the statistics summary: one comparability key and build, its two arms and their paired measures.

Apart from :mod:`.summary`, which groups attempts into cells, so what reads cells (:mod:`.pool_effect`,
:mod:`.headline`) does not import the summary that uses it.
"""

from __future__ import annotations

from ..contracts import ContractModel, DigestValue
from .attempt_record import Build, ComparabilityKey
from .cost import CostPerPass
from .exact import ContinuousStatus
from .paired import Interval, PairedBinary
from .retrieval import RetrievalSummary

__all__ = ["ArmSummary", "Cell", "ContinuousSummary"]


class ArmSummary(ContractModel):
    attempts: int
    passes: int
    delivered: int
    delivered_via: dict[str, int]  # attempts whose memory arrived through each channel
    used: int
    pass_rate: Interval


class ContinuousSummary(ContractModel):
    """Treatment minus control, per pair. The tests are None unless tested; the pair counts are None only when
    not tested (exploratory says how many differences were non-zero and how many zero)."""

    status: ContinuousStatus
    median_difference: float | None
    sign_test_p: float | None
    signed_rank_p: float | None
    nonzero_pairs: int | None
    zero_pairs: int | None
    bounded_arms: int = 0  # arms whose usage was bounded, not reported: their pairs are left out of this measure


class Cell(ContractModel):
    key: ComparabilityKey
    key_id: DigestValue
    build: Build
    attempts: list[int]
    control: ArmSummary
    treatment: ArmSummary
    paired: PairedBinary
    tokens: ContinuousSummary
    wall_seconds: ContinuousSummary
    dollars: ContinuousSummary
    cost: CostPerPass  # tokens (and dollars) per pass, both arms, and the paired test on a pass's cost
    retrieval: RetrievalSummary  # recall@k and precision@k of the challenge's oracle, or why not measured
