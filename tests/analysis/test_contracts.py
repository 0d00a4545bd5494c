"""Comparability keys, preregistration versioning and admission decisions."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from bench.analysis import (
    Admission,
    AnalysisPlan,
    Budget,
    Build,
    Completion,
    FrozenInputs,
    Preregistration,
    PreregistrationMoved,
    ReasonCode,
    admitted,
    check_unmoved,
    correct,
    decide,
    load_preregistrations,
    supersede,
)
from bench.analysis.attempt_record import ComparabilityKey
from bench.contracts import Digest, canonical_bytes
from bench.errors import ContractError
from tests.analysis.attempt_factory import arm, attempt, key, record_digest


def _frozen(verifier: bytes = b"verifier v1", attempts: int = 5) -> FrozenInputs:
    return FrozenInputs(
        prompt=Digest.of(b"prompt"),
        verifier=Digest.of(verifier),
        model="claude-sonnet-4-5",
        memory_systems={"reference": Digest.of(b"reference declaration")},
        budget=Budget(
            attempts=attempts, max_usd_cents_per_pair=300, max_tokens_per_arm=200_000, max_wall_seconds_per_arm=900
        ),
        analysis=AnalysisPlan(confidence="0.95"),
    )


def test_build_is_not_part_of_the_key() -> None:
    assert "build" not in ComparabilityKey.model_fields
    one = attempt(1, arm(True), arm(True), build=Build(label="a", sequence=1))
    two = attempt(1, arm(True), arm(True), build=Build(label="b", sequence=2))
    assert one.key.key_id == two.key.key_id
    assert key(verifier=b"verifier v2").key_id != key().key_id


def test_completed_attempt_needs_both_arms() -> None:
    with pytest.raises(ValidationError, match="lacks an arm result"):
        attempt(1, arm(True), None)
    assert attempt(1, arm(True), None, completion=Completion.ABORTED).treatment is None


def test_unmoved_preregistration_passes_and_moved_fields_are_named() -> None:
    prereg = Preregistration(challenge="rename-config", version=1, frozen=_frozen())
    check_unmoved(prereg, _frozen())
    with pytest.raises(PreregistrationMoved) as caught:
        check_unmoved(prereg, _frozen(verifier=b"verifier v2", attempts=6))
    assert [m.field for m in caught.value.moved] == ["budget.attempts", "verifier"]
    assert "budget.attempts: frozen 5, now 6" in str(caught.value)
    assert "rename-config v1" in str(caught.value)


def test_correction_is_a_new_version_and_old_runs_are_excluded_whole() -> None:
    v1 = Preregistration(challenge="rename-config", version=1, frozen=_frozen())
    v2 = correct(v1, _frozen(verifier=b"verifier v2"), "verifier accepted an empty diff")
    assert (v2.version, v2.supersedes) == (2, v1.digest)
    old = attempt(1, arm(False), arm(True), the_key=key(manifest=canonical_bytes(v1)))
    assert old.key.manifest == v1.digest
    other = attempt(2, arm(False), arm(True))
    records = {record_digest(old): old, record_digest(other): other}
    decisions = supersede(v1, records, v2)
    assert [(d.record, d.decision, d.reason) for d in decisions] == [
        (record_digest(old), Admission.EXCLUDED, ReasonCode.SUPERSEDED_BY_CORRECTION)
    ]
    assert "superseded by v2" in decisions[0].note
    with pytest.raises(ContractError, match="needs a reason"):
        correct(v1, _frozen(), " ")


def test_version_one_cannot_claim_to_supersede() -> None:
    with pytest.raises(ValidationError, match="version 1 has no 'supersedes'"):
        Preregistration(challenge="c", version=1, frozen=_frozen(), supersedes=Digest.of(b"x"), correction="why")


def test_manifest_directory_is_read_and_chain_checked(tmp_path: Path) -> None:
    v1 = Preregistration(challenge="rename-config", version=1, frozen=_frozen())
    v2 = correct(v1, _frozen(verifier=b"v2"), "fix")
    folder = tmp_path / "rename-config"
    folder.mkdir()
    (folder / "v1.json").write_bytes(canonical_bytes(v1))
    (folder / "v2.json").write_bytes(canonical_bytes(v2))
    assert [p.version for p in load_preregistrations(tmp_path)["rename-config"]] == [1, 2]
    (folder / "v1.json").write_bytes(
        canonical_bytes(Preregistration(challenge="rename-config", version=1, frozen=_frozen(attempts=9)))
    )
    with pytest.raises(ContractError, match="v2 supersedes"):
        load_preregistrations(tmp_path)


def test_completed_is_not_admitted() -> None:
    done = attempt(1, arm(True), arm(True))
    aborted = attempt(2, None, None, completion=Completion.ABORTED)
    records = {record_digest(done): done, record_digest(aborted): aborted}
    with pytest.raises(ContractError, match="cannot be admitted"):
        decide(record_digest(aborted), aborted, ReasonCode.PREREGISTERED_COMPLETE)
    with pytest.raises(ContractError, match="no admission decision"):
        admitted(records, [decide(record_digest(done), done, ReasonCode.PREREGISTERED_COMPLETE)])
    decisions = [
        decide(record_digest(done), done, ReasonCode.PREREGISTERED_COMPLETE),
        decide(record_digest(aborted), aborted, ReasonCode.NOT_COMPLETED, "fence stopped arm 2"),
    ]
    assert admitted(records, decisions) == {record_digest(done): done}
    with pytest.raises(ContractError, match="two admission decisions"):
        admitted(records, decisions + decisions[:1])


def test_reason_code_must_match_the_decision() -> None:
    from bench.analysis import AdmissionDecision

    with pytest.raises(ValidationError, match="only 'preregistered-complete' admits"):
        AdmissionDecision(
            record=Digest.of(b"r"), decision=Admission.ADMITTED, reason=ReasonCode.APPARATUS_FAULT, note=""
        )
