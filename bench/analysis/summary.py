"""The statistics summary: a deterministic receipt derived from admitted paired attempts only.

Attempts are grouped into cells, one per (comparability key, build): pooling builds would mix the very effect a
trend is meant to show. Each memory system is its own cell (its name is in the key), beside the others.

In policy mode the model is a deterministic stand-in whose token counts are estimates and which spends nothing, so
token and dollar differences are not tested there at all (``not-tested``), whatever the number of pairs. In
forward mode they use only reported usage: a pair either arm of which was charged an upper bound for want of a
usage report (``ArmResult.usage_bounded``) is left out of them, and ``bounded_arms`` says how many arms were. Each cell
also carries what a pass cost in each arm (:mod:`.cost`) and how well the memory's retrieval found the challenge's
oracle (:mod:`.retrieval`); the summary adds each system's effect per distractor pool size (:mod:`.pool_effect`). Every
number comes from ``exact`` and ``signed_rank``; the same attempts always give byte-identical canonical JSON, which
is what lets ``verify`` re-derive a published summary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction
from statistics import median
from typing import Literal

from pydantic import Field

from ..contracts import Digest, DigestValue, Document
from ..errors import ContractError
from ..gateway import Mode
from .admission import ExclusionCount
from .attempt_record import ArmResult, Completion, Outcome, PairedAttempt
from .cell import ArmSummary, Cell, ContinuousSummary
from .comparisons import Comparison, Plans, baseline_comparisons, control_comparisons
from .cost import cost_per_pass
from .exact import EXPLORATORY_BELOW, ContinuousStatus, clopper_pearson, sign_test
from .paired import Interval, PairedBinary, paired_binary
from .pool_effect import PoolEffect, pool_effects
from .prereg import Preregistration
from .retrieval import summarize as retrieval_summary
from .signed_rank import signed_rank_test

__all__ = [
    "EXPLORATORY_BELOW",
    "PUBLIC_CONTRACTS",
    "ContinuousStatus",
    "Interval",
    "PairedBinary",
    "StatisticsSummary",
    "continuous",
    "summarize",
]


class StatisticsSummary(Document):
    kind: Literal["statistics-summary"] = "statistics-summary"
    schema_version: Literal[4] = 4
    confidence: str
    inputs: list[Digest]
    cells: list[Cell]
    # Each condition against the shared control and each memory system against the static-context baseline,
    # per challenge and pooled across challenges, with what each design could detect (:mod:`.comparisons`).
    comparisons: list[Comparison]
    baseline: str | None  # the memory system the preregistrations name as the baseline
    # Per treatment condition, how many of its pairs were excluded for each reason (the admissions', not inferred)
    exclusions: list[ExclusionCount] = Field(default_factory=list)
    # Each memory system's effect at each distractor pool size, pooled over challenges (:mod:`.pool_effect`).
    pool_effects: list[PoolEffect]


def _arm(results: Sequence[ArmResult], confidence: Fraction) -> ArmSummary:
    passes = sum(r.outcome is Outcome.PASS for r in results)
    low, high = clopper_pearson(passes, len(results), confidence)
    return ArmSummary(
        attempts=len(results),
        passes=passes,
        delivered=sum(r.delivered for r in results),
        delivered_via=dict(sorted(Counter(channel for r in results for channel in r.delivered_via).items())),
        used=sum(r.used for r in results),
        pass_rate=Interval(low=low, high=high),
    )


def continuous(differences: Sequence[Fraction], testable: bool = True, bounded_arms: int = 0) -> ContinuousSummary:
    """Exact sign and signed-rank tests on paired differences; nothing is tested below five non-zero differences
    (zero differences are counted and reported, never toward the five) or when the measure is not ``testable``
    (an estimate, not a measurement). ``bounded_arms`` counts the arms whose pairs were left out as bounded."""
    positive = sum(d > 0 for d in differences)
    negative = sum(d < 0 for d in differences)
    nonzero, zeros = positive + negative, len(differences) - positive - negative
    if not testable or nonzero < EXPLORATORY_BELOW:
        return ContinuousSummary(
            status=ContinuousStatus.EXPLORATORY if testable else ContinuousStatus.NOT_TESTED,
            median_difference=None,
            sign_test_p=None,
            signed_rank_p=None,
            nonzero_pairs=nonzero if testable else None,
            zero_pairs=zeros if testable else None,
            bounded_arms=bounded_arms,
        )
    return ContinuousSummary(
        status=ContinuousStatus.TESTED,
        median_difference=float(median(differences)),
        sign_test_p=float(sign_test(positive, negative)),
        signed_rank_p=signed_rank_test(differences).p_value,
        nonzero_pairs=nonzero,
        zero_pairs=zeros,
        bounded_arms=bounded_arms,
    )


def _cell(attempts: Sequence[PairedAttempt], confidence: Fraction) -> Cell:
    first = attempts[0]
    pairs = [(a.control, a.treatment) for a in attempts if a.control is not None and a.treatment is not None]
    controls = [c for c, _ in pairs]
    treatments = [t for _, t in pairs]
    measured = first.key.gateway_mode is Mode.FORWARD
    reported = [(c, t) for c, t in pairs if not (c.usage_bounded or t.usage_bounded)]
    bounded = sum(arm.usage_bounded for pair in pairs for arm in pair)
    return Cell(
        key=first.key,
        key_id=first.key.key_id,
        build=first.build,
        attempts=[a.attempt for a in attempts],
        control=_arm(controls, confidence),
        treatment=_arm(treatments, confidence),
        paired=paired_binary(pairs, confidence),
        # Fractions of the recorded floats: differences and ties are decided exactly.
        tokens=continuous([Fraction(t.tokens - c.tokens) for c, t in reported], measured, bounded),
        wall_seconds=continuous([Fraction(t.wall_seconds) - Fraction(c.wall_seconds) for c, t in pairs]),
        dollars=continuous([Fraction(t.spent_usd - c.spent_usd) for c, t in reported], measured, bounded),
        cost=cost_per_pass(pairs, measured),
        retrieval=retrieval_summary([a.retrieval for a in attempts if a.control is not None and a.treatment]),
    )


def _parse_confidence(confidence: str) -> Fraction:
    try:
        value = Fraction(confidence)
    except ValueError as exc:
        raise ContractError(f"confidence {confidence!r} is not a decimal number such as '0.95'") from exc
    if not 0 < value < 1:
        raise ContractError(f"confidence {confidence!r} must lie strictly between 0 and 1")
    return value


def _cells(admitted: Mapping[Digest, PairedAttempt]) -> list[list[PairedAttempt]]:
    """Completed attempts grouped by (challenge, comparability key, build), each sorted by attempt number."""
    groups: dict[tuple[str, DigestValue, int, str], list[PairedAttempt]] = {}
    for digest, attempt in admitted.items():
        if attempt.completion is not Completion.COMPLETED:
            raise ContractError(
                f"record {digest} is {attempt.completion.value}; only completed attempts are summarised"
            )
        cell_id = (attempt.key.challenge, attempt.key.key_id, attempt.build.sequence, attempt.build.label)
        groups.setdefault(cell_id, []).append(attempt)
    cells = []
    for cell_id in sorted(groups):
        attempts = sorted(groups[cell_id], key=lambda a: a.attempt)
        numbers = [a.attempt for a in attempts]
        if len(set(numbers)) != len(numbers):
            raise ContractError(
                f"{cell_id[0]} build {cell_id[3]}: attempt numbers repeat ({numbers}); each is run once"
            )
        cells.append(attempts)
    return cells


def summarize(
    admitted: Mapping[Digest, PairedAttempt],
    confidence: str = "0.95",
    preregistrations: Sequence[Preregistration] | None = None,
    exclusions: Sequence[ExclusionCount] = (),
) -> StatisticsSummary:
    """Summarise admitted attempts (the caller selects them with ``admission.admitted``); ``exclusions`` are the
    counts of the others (:func:`.admission.exclusion_counts`), carried as given.

    With ``preregistrations`` (those the records ran under), each comparison states its planned power beside the
    admitted one and the memory systems are compared with the baseline the preregistrations name.
    """
    level = _parse_confidence(confidence)
    plans = Plans.of(preregistrations)
    plans.check(admitted)
    grouped = _cells(admitted)
    baseline = plans.baseline()
    comparisons = control_comparisons(grouped, plans, level)
    if baseline is not None:
        comparisons += baseline_comparisons(admitted, baseline, plans, level)
    cells = [_cell(attempts, level) for attempts in grouped]
    return StatisticsSummary(
        confidence=confidence,
        inputs=sorted(admitted),
        cells=cells,
        comparisons=comparisons,
        baseline=baseline,
        exclusions=list(exclusions),
        pool_effects=pool_effects(cells, comparisons),
    )


# What `stele-bench schema` exports (listed in bench.contracts.registry by the lead).
PUBLIC_CONTRACTS = (StatisticsSummary,)
