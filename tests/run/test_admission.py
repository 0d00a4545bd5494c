"""Admission: completed is not admitted; each exclusion has its reason code, checked in a reader's order."""

from __future__ import annotations

import pytest

from bench.agent.arm_record import PairRecord
from bench.analysis.admission import Admission, ReasonCode, decide
from bench.analysis.attempt_record import ArmResult, Build, ComparabilityKey, Completion, Outcome, PairedAttempt
from bench.contracts import Digest, PortablePath, TreeDigest
from bench.fence.fence_record import FenceOutcome, FenceRecord
from bench.gateway import Mode
from bench.packaging.certify import CertificationReport, Finding, FindingKind, Verdict
from bench.provision.receipt import PairVerdict
from bench.run.admit import exclusion
from bench.sandbox.audit import AuditReceipt, audit_trees
from bench.sandbox.backends import ProcessOutcome
from bench.sandbox.calibrate import CalibrationReport, CalibrationVerdict, VerifierRuns
from bench.store import Store
from tests.sandbox.sandbox_helpers import make_tree

D = Digest.of(b"any stored object")
SHA = "ab" * 32


def certification(verdict: Verdict = Verdict.CERTIFIED) -> CertificationReport:
    findings = (
        ()
        if verdict is Verdict.CERTIFIED
        else (Finding(kind=FindingKind.SOLUTION_LEAK, surface="evidence", path="notes.md", line=3, marker="95.85"),)
    )
    return CertificationReport(verdict=verdict, surfaces=(), unchecked=(), findings=findings)


def calibration(verdict: CalibrationVerdict = CalibrationVerdict.CALIBRATED) -> CalibrationReport:
    return CalibrationReport(
        challenge_id="c",
        image_id=f"sha256:{SHA}",
        start=D,
        repeats=1,
        untouched=VerifierRuns(results=(D,), outcomes=(ProcessOutcome.FAILED,)),
        oracle_tree=D,
        oracle=VerifierRuns(results=(D,), outcomes=(ProcessOutcome.SUCCEEDED,)),
        prebuild_audit=D,
        prebuild_undeclared=(),
        oracle_audit=D,
        undeclared_outputs=(),
        verdict=verdict,
        reason="",
    )


def pair(verdict: PairVerdict = PairVerdict.VALID) -> PairRecord:
    reasons = () if verdict is PairVerdict.VALID else ("probe 'ledger' failed",)
    return PairRecord(
        challenge_id="c",
        attempt=1,
        system="memory",
        model="m",
        gateway_mode=Mode.POLICY,
        image_id=f"sha256:{SHA}",
        start=D,
        spec_diff=D,
        fence=D,
        order=("control", "memory"),
        arms=(D, D),
        verdict=verdict,
        reasons=reasons,
    )


def record(completion: Completion = Completion.COMPLETED) -> PairedAttempt:
    arm = ArmResult(outcome=Outcome.PASS, delivered=True, used=True, tokens=10, wall_seconds=1.0)
    key = ComparabilityKey(
        challenge="c",
        fixture=D,
        model="m",
        gateway_mode=Mode.POLICY,
        policy=D,
        control_condition="no-memory",
        treatment_condition="memory",
        manifest=D,
        verifier=D,
        source_commit="a" * 40,
    )
    both = completion is Completion.COMPLETED
    return PairedAttempt(
        key=key,
        build=Build(label="b", sequence=1),
        attempt=1,
        completion=completion,
        control=arm if both else None,
        treatment=arm if both else None,
    )


FENCE = FenceRecord(pair="c.1", outcome=FenceOutcome.NOT_APPLICABLE, checks=())


def audits(store: Store, control: dict[str, bytes] | None = None) -> dict[str, AuditReceipt]:
    """Both arms' real audits of a start tree; ``control`` is what the control arm's final tree holds."""
    start = make_tree(store, {"src/app.py": b"print(1)\n"})
    clean = make_tree(store, {"src/app.py": b"print(2)\n"})
    final = clean if control is None else make_tree(store, control)
    allowed = (PortablePath("src"),)
    return {
        "control": audit_trees(store, TreeDigest(start), TreeDigest(final), allowed),
        "treatment": audit_trees(store, TreeDigest(start), TreeDigest(clean), allowed),
    }


def test_a_clean_completed_record_may_be_admitted(store: Store) -> None:
    assert exclusion(certification(), calibration(), FENCE, pair(), record(), audits(store)) is None


def test_a_dirty_audit_in_either_arm_is_its_own_exclusion_naming_the_paths(store: Store) -> None:
    dirty = audits(store, {"src/app.py": b"print(2)\n", "package-lock.json": b"{}", "README": b"x"})
    excluded = exclusion(certification(), calibration(), FENCE, pair(), record(), dirty)
    assert excluded == (
        ReasonCode.AUDIT_DIRTY,
        "outside allowed_output_paths: control arm changed README, package-lock.json",
    )
    decision = decide(D, record(), *excluded)
    assert decision.decision is Admission.EXCLUDED  # thrown out, never admitted as the FAIL its reward would be


@pytest.mark.parametrize(
    ("arguments", "reason", "note"),
    [
        ({"certification": certification(Verdict.REJECTED)}, ReasonCode.CERTIFICATION_FAILED, "rejected"),
        ({"calibration": calibration(CalibrationVerdict.PASSES_UNTOUCHED)}, ReasonCode.APPARATUS_FAULT, "untouched"),
        ({"fence": FENCE.model_copy(update={"outcome": FenceOutcome.STOPPED})}, ReasonCode.FENCE_STOPPED, "fence"),
        ({"pair": pair(PairVerdict.PROBE_FAILED)}, ReasonCode.APPARATUS_FAULT, "probe 'ledger' failed"),
        ({"record": record(Completion.ABORTED)}, ReasonCode.NOT_COMPLETED, "did not finish"),
    ],
)
def test_each_exclusion_has_its_reason(
    store: Store, arguments: dict[str, object], reason: ReasonCode, note: str
) -> None:
    values = {"certification": certification(), "calibration": calibration(), "fence": FENCE, "pair": pair()}
    values["audits"] = audits(store)
    values |= {"record": record()} | arguments
    excluded = exclusion(**values)  # type: ignore[arg-type]
    assert excluded is not None
    assert excluded[0] is reason and note in excluded[1]


def test_an_empty_memory_is_an_invalid_pair_never_a_clean_null(store: Store) -> None:
    excluded = exclusion(
        certification(), calibration(), FENCE, pair(PairVerdict.MEMORY_MISSING), record(), audits(store)
    )
    assert excluded is not None and excluded[0] is ReasonCode.APPARATUS_FAULT
