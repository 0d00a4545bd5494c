"""The statistics summary: cells per key and build, the exploratory cut-off and byte-identical output."""

from __future__ import annotations

import random

import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from bench.analysis import Build, ContinuousStatus, Outcome, summarize
from bench.contracts import canonical_bytes
from bench.errors import ContractError
from bench.gateway import Mode
from bench.publish.render import render_report
from tests.analysis.attempt_factory import arm, attempt, key, random_attempts, record_digest


def _by_digest(attempts: list) -> dict:
    return {record_digest(a): a for a in attempts}


def test_below_five_attempts_continuous_measures_are_exploratory() -> None:
    four = _by_digest([attempt(i, arm(False, 1000 + i), arm(True, 900 + 7 * i)) for i in range(1, 5)])
    cell = summarize(four).cells[0]
    for measure in (cell.tokens, cell.wall_seconds):
        assert measure.status is ContinuousStatus.EXPLORATORY
        assert (measure.median_difference, measure.sign_test_p, measure.signed_rank_p) == (None, None, None)
    five = _by_digest([attempt(i, arm(False, 1000 + i), arm(True, 900 + 7 * i)) for i in range(1, 6)])
    tested = summarize(five).cells[0].tokens
    assert tested.status is ContinuousStatus.TESTED
    assert tested.sign_test_p == pytest.approx(stats.binomtest(0, 5).pvalue)
    diffs = [(900 + 7 * i) - (1000 + i) for i in range(1, 6)]
    assert tested.signed_rank_p == pytest.approx(stats.wilcoxon(diffs, method="exact").pvalue, abs=1e-12)


def test_all_pass_both_arms_keeps_honest_intervals() -> None:
    cell = summarize(_by_digest([attempt(i, arm(True), arm(True)) for i in range(1, 6)])).cells[0]
    assert cell.treatment.pass_rate.high == 1.0 and cell.treatment.pass_rate.low == pytest.approx(0.025**0.2)
    assert cell.paired.mcnemar_p == 1.0 and cell.paired.odds_ratio.high is None


def test_paired_counts_and_mcnemar_match_statsmodels() -> None:
    rng = random.Random(21)
    attempts = random_attempts(rng, 40, key(), Build(label="b", sequence=1))
    cell = summarize(_by_digest(attempts)).cells[0]
    paired = cell.paired
    assert paired.both_pass + paired.treatment_only + paired.control_only + paired.neither == 40
    table = [[paired.both_pass, paired.control_only], [paired.treatment_only, paired.neither]]
    assert paired.mcnemar_p == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-9)
    assert cell.treatment.passes == sum(a.treatment.outcome is Outcome.PASS for a in attempts)
    assert cell.treatment.delivered >= cell.treatment.used


def test_cells_split_by_key_and_build_and_output_is_byte_identical() -> None:
    rng = random.Random(8)
    attempts = random_attempts(rng, 6, key(), Build(label="b1", sequence=1))
    attempts += random_attempts(rng, 6, key(), Build(label="b2", sequence=2))
    attempts += random_attempts(rng, 3, key(challenge="add-flag"), Build(label="b1", sequence=1))
    records = _by_digest(attempts)
    summary = summarize(records)
    assert [(c.key.challenge, c.build.label) for c in summary.cells] == [
        ("add-flag", "b1"),
        ("rename-config", "b1"),
        ("rename-config", "b2"),
    ]
    shuffled = dict(sorted(records.items(), key=lambda item: random.Random(1).random()))
    assert canonical_bytes(summarize(shuffled)) == canonical_bytes(summary)


def test_repeated_attempt_numbers_are_refused() -> None:
    a = attempt(1, arm(True), arm(False))
    b = attempt(1, arm(False), arm(False))
    with pytest.raises(ContractError, match="attempt numbers repeat"):
        summarize(_by_digest([a, b]))


def test_policy_mode_never_tests_tokens_or_dollars_and_the_report_says_the_model_was_a_stand_in() -> None:
    attempts = random_attempts(random.Random(7), 8, key(mode=Mode.POLICY), Build(label="reference@1", sequence=1))
    cell = summarize({record_digest(a): a for a in attempts}).cells[0]
    assert cell.tokens.status is cell.dollars.status is ContinuousStatus.NOT_TESTED
    assert cell.tokens.median_difference is None and cell.dollars.sign_test_p is None
    assert cell.wall_seconds.status is ContinuousStatus.TESTED  # wall time is measured, not estimated
    forward = random_attempts(random.Random(7), 8, key(), Build(label="reference@1", sequence=1))
    assert summarize({record_digest(a): a for a in forward}).cells[0].tokens.status is ContinuousStatus.TESTED
    summary = summarize({record_digest(a): a for a in attempts})
    html = render_report(summary, {}, {})
    assert "The model was a deterministic stand-in" in html.split("<section", 1)[0]
    assert "deterministic stand-in" not in render_report(summarize({record_digest(a): a for a in forward}), {}, {})


def test_zero_differences_are_reported_and_never_count_toward_five() -> None:
    # Five pairs, four of them ties on tokens: one non-zero difference, so nothing is tested, and the zeros show.
    tied = [attempt(i, arm(False, 1000), arm(True, 1000 if i > 1 else 900)) for i in range(1, 6)]
    tokens = summarize(_by_digest(tied)).cells[0].tokens
    assert tokens.status is ContinuousStatus.EXPLORATORY
    assert (tokens.nonzero_pairs, tokens.zero_pairs, tokens.sign_test_p) == (1, 4, None)
    six = [attempt(i, arm(False, 1000), arm(True, 1000 if i == 6 else 900 - i)) for i in range(1, 7)]
    tested = summarize(_by_digest(six)).cells[0].tokens
    assert (tested.status, tested.nonzero_pairs, tested.zero_pairs) == (ContinuousStatus.TESTED, 5, 1)
    assert tested.sign_test_p == pytest.approx(stats.binomtest(0, 5).pvalue)


def test_bounded_usage_is_left_out_of_token_and_dollar_statistics_and_counted() -> None:
    """An arm charged an upper bound for want of a usage report has no measured tokens or dollars: its pair is left
    out of those two measures (not of the outcomes or wall seconds), and the summary and report say how many."""
    reported = [attempt(i, arm(False, 1000), arm(True, 900 - i)) for i in range(1, 6)]
    bounded = arm(True, 0).model_copy(update={"usage_bounded": True})  # tokens 0: the harness counted none
    attempts = [*reported, attempt(6, arm(False, 1000), bounded), attempt(7, bounded, bounded)]
    cell = summarize(_by_digest(attempts)).cells[0]
    for measure in (cell.tokens, cell.dollars):
        assert measure.bounded_arms == 3
        assert (measure.nonzero_pairs or 0) + (measure.zero_pairs or 0) == 5  # only the reported pairs
    assert cell.tokens.status is ContinuousStatus.TESTED and cell.tokens.sign_test_p == pytest.approx(
        stats.binomtest(0, 5).pvalue
    )
    paired = cell.paired
    assert cell.wall_seconds.bounded_arms == 0 and cell.control.attempts == 7  # the rest counts every pair
    assert paired.both_pass + paired.treatment_only + paired.control_only + paired.neither == 7
    assert "3 arm(s) whose usage was bounded, not reported" in render_report(summarize(_by_digest(attempts)), {}, {})
