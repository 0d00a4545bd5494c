"""Comparisons across challenges: each system against the shared control and against the static baseline, per
challenge and pooled, with the preregistered minimum detectable effect beside each result."""

from __future__ import annotations

from fractions import Fraction

import pytest
from statsmodels.stats.contingency_tables import mcnemar

from bench.analysis import (
    AnalysisPlan,
    Build,
    ComparisonKind,
    Preregistration,
    stated_power,
    summarize,
)
from bench.analysis.stratified import stratified_exact
from bench.contracts import Digest
from bench.errors import ContractError
from bench.publish.render import render_report
from tests.analysis.attempt_factory import arm, attempt, frozen_inputs, key, record_digest

CHALLENGES = ("add-flag", "rename-config", "fix-rounding")
ATTEMPTS = 5
# Per challenge, per attempt: (control, notes baseline, memory system) pass/fail.
OUTCOMES = {
    "add-flag": ["FPP", "FFP", "FFP", "PPP", "FPF"],
    "rename-config": ["FFP", "FFP", "FPP", "FFF", "PPP"],
    "fix-rounding": ["PPF", "FFP", "FFP", "FFP", "FPP"],
}


def _prereg(challenge: str) -> Preregistration:
    analysis = AnalysisPlan(
        confidence="0.95",
        minimum_detectable_effect=stated_power("0.95", "0.8", ATTEMPTS, len(CHALLENGES)),
        baseline="notes",
    )
    base = frozen_inputs(b"verifier " + challenge.encode(), attempts=ATTEMPTS)
    systems = {"notes": Digest.of(b"notes"), "recall": Digest.of(b"recall")}
    frozen = base.model_copy(update={"memory_systems": systems, "analysis": analysis})
    return Preregistration(challenge=challenge, version=1, frozen=frozen)


def _records(preregs: dict[str, Preregistration]) -> dict:
    records = []
    for challenge, rows in OUTCOMES.items():
        for number, row in enumerate(rows, start=1):
            control = arm(row[0] == "P", tokens=1000 + number)
            for system, passed in (("notes", row[1]), ("recall", row[2])):
                the_key = key(challenge=challenge, verifier=b"verifier " + challenge.encode()).model_copy(
                    update={
                        "treatment_condition": f"{system}:backfilled",
                        "manifest": preregs[challenge].digest,
                        "fixture": Digest.of(b"the suite's fixture"),
                    }
                )
                build = Build(label=f"{system}@1", sequence=1)
                records.append(attempt(number, control, arm(passed == "P"), the_key, build))
    return {record_digest(r): r for r in records}


@pytest.fixture(scope="module")
def preregs() -> dict[str, Preregistration]:
    return {c: _prereg(c) for c in CHALLENGES}


def _discordant(column: int, reference: int) -> list[tuple[int, int]]:
    """(b, c) per challenge in sorted order: one column of OUTCOMES against another, counted by hand."""
    strata = []
    for challenge in sorted(OUTCOMES):
        rows = OUTCOMES[challenge]
        b = sum(r[column] == "P" and r[reference] == "F" for r in rows)
        c = sum(r[column] == "F" and r[reference] == "P" for r in rows)
        strata.append((b, c))
    return strata


def test_each_system_against_control_and_against_the_baseline(preregs: dict[str, Preregistration]) -> None:
    summary = summarize(_records(preregs), "0.95", list(preregs.values()))
    assert summary.baseline == "notes"
    kinds = sorted((c.kind.value, c.treatment.label, c.reference) for c in summary.comparisons)
    assert kinds == [
        ("versus-baseline", "recall@1", "notes@1"),
        ("versus-control", "notes@1", "no-memory"),
        ("versus-control", "recall@1", "no-memory"),
    ]
    against_baseline = next(c for c in summary.comparisons if c.kind is ComparisonKind.VERSUS_BASELINE)
    against_control = next(
        c for c in summary.comparisons if c.treatment.label == "recall@1" and c.kind is ComparisonKind.VERSUS_CONTROL
    )
    # recall against control: column 2 against column 0; against the baseline: column 2 against column 1.
    expectations = ((against_control, _discordant(2, 0)), (against_baseline, _discordant(2, 1)))
    for comparison, strata in expectations:
        assert [s.challenge for s in comparison.strata] == sorted(CHALLENGES)
        assert [(s.paired.treatment_only, s.paired.control_only) for s in comparison.strata] == strata
        for stratum, (b, c) in zip(comparison.strata, strata, strict=True):
            assert stratum.paired.mcnemar_p == pytest.approx(mcnemar([[0, c], [b, 0]], exact=True).pvalue, abs=1e-12)
        pooled = stratified_exact(strata, Fraction(95, 100))
        assert comparison.pooled.p_value == float(pooled.p_value)
        assert (comparison.pooled.treatment_only, comparison.pooled.reference_only) == (
            pooled.treatment_only,
            pooled.reference_only,
        )
        assert comparison.pooled.pairs == ATTEMPTS * len(CHALLENGES)


def test_power_beside_each_result_is_the_preregistered_statement(preregs: dict[str, Preregistration]) -> None:
    summary = summarize(_records(preregs), "0.95", list(preregs.values()))
    stated = next(iter(preregs.values())).frozen.analysis.minimum_detectable_effect
    assert stated is not None
    # One challenge at five attempts detects nothing at 0.05; fifteen pairs pooled detect about 0.48.
    assert stated.per_challenge.minimum_detectable_effect is None
    assert stated.pooled.minimum_detectable_effect == pytest.approx(0.476, abs=5e-4)
    for comparison in summary.comparisons:
        for stratum in comparison.strata:
            assert stratum.power.planned == stated.per_challenge
            assert stratum.power.underpowered is not stratum.power.significant
        assert comparison.pooled.power.planned == stated.pooled
    html = render_report(summary, {}, {})
    assert "pooled (stratified exact)" in html
    assert "<strong>Underpowered</strong>: these pairs could detect no difference." in html
    planned = f"a difference of {stated.pooled.minimum_detectable_effect * 100:.0f} points or more with the 15 planned"
    assert planned in html
    assert "compared with the static baseline notes" in html


def test_records_under_an_unknown_preregistration_are_refused(preregs: dict[str, Preregistration]) -> None:
    with pytest.raises(ContractError, match="not among the preregistrations given"):
        summarize(_records(preregs), "0.95", [preregs["add-flag"]])


def test_two_records_of_one_attempt_with_different_controls_are_refused(preregs: dict[str, Preregistration]) -> None:
    records = _records(preregs)
    victim = next(d for d, r in records.items() if r.key.treatment_condition.startswith("recall") and r.attempt == 1)
    changed = records.pop(victim)
    assert changed.control is not None
    moved = changed.model_copy(update={"control": changed.control.model_copy(update={"tokens": 1})})
    records[record_digest(moved)] = moved
    with pytest.raises(ContractError, match="report different control arms; one attempt has one shared control"):
        summarize(records, "0.95", list(preregs.values()))


def test_preregistrations_naming_different_baselines_are_refused(preregs: dict[str, Preregistration]) -> None:
    records = _records(preregs)
    odd = preregs["add-flag"]
    analysis = odd.frozen.analysis.model_copy(update={"baseline": None})
    changed = odd.model_copy(update={"frozen": odd.frozen.model_copy(update={"analysis": analysis})})
    moved = {
        d: r.model_copy(update={"key": r.key.model_copy(update={"manifest": changed.digest})})
        if r.key.manifest == odd.digest
        else r
        for d, r in records.items()
    }
    given = [changed, preregs["rename-config"], preregs["fix-rounding"]]
    with pytest.raises(
        ContractError, match=r"name different baselines \['None', 'notes'\]; one suite has one baseline"
    ):
        summarize(moved, "0.95", given)
