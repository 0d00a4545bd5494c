"""Memory under noise in the summary: tokens (and dollars) per pass with the exact paired sign test, recall@k and
precision@k of the oracle, and each system's effect per distractor pool size; each cross-checked against an
independent computation (scipy, or the counts made by hand from the records)."""

from __future__ import annotations

import random
from decimal import Decimal
from fractions import Fraction
from statistics import median

import pytest
from attempt_factory import arm, attempt, key, record_digest
from scipy.stats import binomtest

from bench.analysis import ArmResult, Build, ComparisonKind, ContinuousStatus, Outcome, PairedAttempt, summarize
from bench.analysis.headline import headline
from bench.analysis.retrieval import RetrievalResult, RetrievalStatus
from bench.contracts import Digest
from bench.gateway import Mode


def _passed(result: ArmResult) -> bool:
    return result.outcome is Outcome.PASS


def _records(attempts: list[PairedAttempt]) -> dict[Digest, PairedAttempt]:
    return {record_digest(a): a for a in attempts}


def _forward_arms(rng: random.Random, n: int) -> list[tuple[ArmResult, ArmResult]]:
    pairs = []
    for _ in range(n):
        control = arm(rng.random() < 0.6, rng.randint(20_000, 90_000))
        treatment = arm(rng.random() < 0.8, rng.randint(10_000, 80_000))
        pairs.append(
            (
                control.model_copy(update={"spent_usd": Decimal(control.tokens) / 250_000}),
                treatment.model_copy(update={"spent_usd": Decimal(treatment.tokens) / 250_000}),
            )
        )
    return pairs


def test_tokens_and_dollars_per_pass_and_the_paired_sign_test_match_an_independent_computation() -> None:
    rng = random.Random(38)
    pairs = _forward_arms(rng, 40)
    records = [attempt(n, c, t) for n, (c, t) in enumerate(pairs, start=1)]
    (cell,) = summarize(_records(records)).cells
    for side, arms in (("control", [c for c, _ in pairs]), ("treatment", [t for _, t in pairs])):
        cost = getattr(cell.cost, side)
        passes = [a for a in arms if _passed(a)]
        assert cost.passes == len(passes) and cost.arms == len(arms) and cost.bounded == 0
        assert cost.tokens_per_pass == pytest.approx(sum(a.tokens for a in arms) / len(passes), rel=1e-12)
        usd = sum(a.spent_usd for a in arms) / len(passes)
        assert Decimal(cost.usd_per_pass or "0") == usd.quantize(Decimal("0.000001"))
    both = [t.tokens - c.tokens for c, t in pairs if _passed(c) and _passed(t)]
    positive, negative = sum(d > 0 for d in both), sum(d < 0 for d in both)
    test = cell.cost.paired
    assert test.status is ContinuousStatus.TESTED and test.pairs == len(both) >= 5
    assert (test.positive, test.negative, test.zero) == (positive, negative, len(both) - positive - negative)
    assert test.sign_test_p == pytest.approx(binomtest(positive, positive + negative, 0.5).pvalue, rel=1e-12)
    assert test.median_difference == pytest.approx(median(both))


def test_bounded_usage_is_left_out_of_cost_and_counted() -> None:
    """An arm whose usage was bounded, not reported, says nothing about cost: out of the totals, counted apart."""
    pairs = _forward_arms(random.Random(7), 12)
    bounded = {2, 5, 9}
    records = [
        attempt(
            n, c, t.model_copy(update={"usage_bounded": n in bounded, "tokens": 10**9 if n in bounded else t.tokens})
        )
        for n, (c, t) in enumerate(pairs, start=1)
    ]
    (cell,) = summarize(_records(records)).cells
    reported = [t for n, (_, t) in enumerate(pairs, start=1) if n not in bounded]
    assert (cell.cost.treatment.arms, cell.cost.treatment.bounded) == (len(reported), len(bounded))
    assert cell.cost.treatment.tokens == sum(t.tokens for t in reported)
    kept = [n for n, (c, t) in enumerate(pairs, start=1) if n not in bounded and _passed(c) and _passed(t)]
    assert cell.cost.paired.pairs == len(kept)


def test_in_policy_mode_a_pass_s_cost_is_an_estimate_never_tested_and_no_dollars_are_shown() -> None:
    pairs = _forward_arms(random.Random(3), 20)
    records = [attempt(n, c, t, key(mode=Mode.POLICY)) for n, (c, t) in enumerate(pairs, start=1)]
    (cell,) = summarize(_records(records)).cells
    assert cell.cost.paired.status is ContinuousStatus.NOT_TESTED and cell.cost.paired.sign_test_p is None
    assert cell.cost.treatment.usd is None and cell.cost.treatment.usd_per_pass is None
    assert cell.cost.treatment.tokens_per_pass is not None  # shown, as an estimate


def test_no_pass_means_no_cost_per_pass_rather_than_a_division_by_zero() -> None:
    records = [attempt(n, arm(False, 5000), arm(False, 4000)) for n in range(1, 4)]
    (cell,) = summarize(_records(records)).cells
    assert cell.cost.control.tokens_per_pass is None and cell.cost.control.tokens == 15_000
    assert cell.cost.paired.status is ContinuousStatus.EXPLORATORY and cell.cost.paired.pairs == 0


ORACLE = ("adr/0002.md", "issues/0014.md")


def _retrieved(*paths: str) -> RetrievalResult:
    return RetrievalResult(oracle=ORACLE, depths=(1, 3, 5), retrieved=paths)


def _brute(retrieved: tuple[str, ...], k: int) -> tuple[Fraction, Fraction]:
    hits = 0
    for place, path in enumerate(retrieved):
        if place < k and path in ORACLE:
            hits += 1
    return Fraction(hits, len(ORACLE)), Fraction(hits, k)


def test_recall_and_precision_at_k_are_the_mean_over_attempts_of_a_count_made_by_hand() -> None:
    lists = [
        ("adr/0002.md", "notes/other-1001.md", "issues/0014.md"),
        ("notes/other-1001.md", "notes/other-1002.md", "adr/0002.md"),
        ("issues/0014.md",),
        (),
    ]
    records = [
        attempt(n, arm(False), arm(True, delivered=True)).model_copy(update={"retrieval": _retrieved(*paths)})
        for n, paths in enumerate(lists, start=1)
    ]
    (cell,) = summarize(_records(records)).cells
    assert cell.retrieval.status is RetrievalStatus.MEASURED and cell.retrieval.attempts == 4
    for score in cell.retrieval.depths:
        recalls, precisions = zip(*(_brute(paths, score.k) for paths in lists), strict=True)
        assert score.recall == pytest.approx(float(sum(recalls) / 4))
        assert score.precision == pytest.approx(float(sum(precisions) / 4))
    assert [score.k for score in cell.retrieval.depths] == [1, 3, 5]


def test_a_system_without_retrieval_is_not_measured_never_zero_and_a_control_challenge_has_no_oracle() -> None:
    plain = [attempt(n, arm(False), arm(True)) for n in range(1, 3)]
    (cell,) = summarize(_records(plain)).cells
    assert cell.retrieval.status is RetrievalStatus.NOT_MEASURED and cell.retrieval.depths == []
    silent = [
        a.model_copy(update={"retrieval": RetrievalResult(oracle=ORACLE, depths=(3,), retrieved=None, note="refused")})
        for a in plain
    ]
    (cell,) = summarize(_records(silent)).cells
    assert cell.retrieval.status is RetrievalStatus.NOT_MEASURED and cell.retrieval.note == "refused"
    control = [a.model_copy(update={"retrieval": RetrievalResult(oracle=(), depths=(3,), retrieved=())}) for a in plain]
    (cell,) = summarize(_records(control)).cells
    assert cell.retrieval.status is RetrievalStatus.NO_ORACLE


def _pooled_records(rng: random.Random) -> list[PairedAttempt]:
    """Two challenges, two systems, pool sizes 0, 50 and 500: the memory helps less as the noise grows."""
    records = []
    for challenge in ("alpha", "beta"):
        for condition, strength in (("reference:g", 0.85), ("static-notes:g", 0.7)):
            for size, fade in ((0, 0.0), (50, 0.15), (500, 0.35)):
                changes = {"treatment_condition": condition, "distractors": size, "fixture": Digest.of(b"fixture")}
                the_key = key(challenge).model_copy(update=changes)
                build = Build(label=condition.split(":")[0], sequence=1)
                for number in range(1, 9):
                    control = arm(rng.random() < 0.3, rng.randint(1000, 3000))
                    treatment = arm(rng.random() < strength - fade, rng.randint(1000, 3000), delivered=True)
                    records.append(attempt(number, control, treatment, the_key, build))
    return records


def test_the_effect_per_pool_size_matches_counts_made_by_hand_and_scipy() -> None:
    records = _pooled_records(random.Random(500))
    summary = summarize(_records(records))
    assert [(e.treatment_condition, e.distractors) for e in summary.pool_effects] == [
        (condition, size) for condition in ("reference:g", "static-notes:g") for size in (0, 50, 500)
    ]
    for effect in summary.pool_effects:
        mine = [
            r for r in records if r.key.treatment_condition == effect.treatment_condition
            and r.key.distractors == effect.distractors
        ]  # fmt: skip
        arms = [(r.control, r.treatment) for r in mine if r.control is not None and r.treatment is not None]
        passes = (len(arms), sum(_passed(c) for c, _ in arms), sum(_passed(t) for _, t in arms))
        assert passes == (effect.pairs, effect.control_passes, effect.treatment_passes)
        t_only = sum(_passed(t) and not _passed(c) for c, t in arms)
        c_only = sum(_passed(c) and not _passed(t) for c, t in arms)
        assert (effect.treatment_only, effect.control_only) == (t_only, c_only)
        assert effect.difference == pytest.approx((t_only - c_only) / len(mine))
        assert effect.mcnemar_p == pytest.approx(
            binomtest(t_only, t_only + c_only, 0.5).pvalue if t_only + c_only else 1
        )
        (comparison,) = [
            c for c in summary.comparisons
            if c.kind is ComparisonKind.VERSUS_CONTROL and c.treatment_condition == effect.treatment_condition
            and c.distractors == effect.distractors
        ]  # fmt: skip
        assert effect.stratified_p == comparison.pooled.p_value
        assert {s.challenge for s in comparison.strata} == {"alpha", "beta"}  # strata never mix pool sizes
        assert comparison.pooled.pairs == len(mine)


def test_each_pool_size_is_its_own_comparison_and_its_own_headline_row() -> None:
    records = _pooled_records(random.Random(5))
    summary = summarize(_records(records))
    against = [c for c in summary.comparisons if c.kind is ComparisonKind.VERSUS_CONTROL]
    assert sorted(c.distractors for c in against) == [0, 0, 50, 50, 500, 500]
    lines = headline(summary).lines()
    assert any(line.startswith("reference:g@500 ") for line in lines)  # several sizes: the size is named
    assert {(s.condition, s.distractors) for s in headline(summary).systems} == {
        (condition, size) for condition in ("reference:g", "static-notes:g") for size in (0, 50, 500)
    }
