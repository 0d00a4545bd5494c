"""Admission: completed is not admitted; each exclusion has its reason code, checked in a reader's order."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from bench.agent.arm_record import PairRecord
from bench.agent.rederive_injected import InjectedRederivation
from bench.agent.replay_tools import ToolReplay
from bench.analysis.admission import Admission, ReasonCode, decide
from bench.analysis.attempt_record import (
    ArmEnding,
    ArmResult,
    Build,
    ComparabilityKey,
    Completion,
    Outcome,
    PairedAttempt,
)
from bench.analysis.prereg import UndeliveredRule
from bench.contracts import Digest, PortablePath, TreeDigest
from bench.errors import ContractError
from bench.fence.fence_record import FenceOutcome, FenceRecord
from bench.gateway import Mode
from bench.packaging.certify import CertificationReport, Finding, FindingKind, Verdict
from bench.provision.receipt import PairVerdict
from bench.sandbox.backends import ProcessOutcome
from bench.stages.admit import exclusion
from bench.stages.audit import AuditReceipt, audit_trees
from bench.stages.calibrate import CalibrationReport, CalibrationVerdict, VerifierRuns
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
        untouched=VerifierRuns(outcomes=(ProcessOutcome.FAILED,)),
        oracle_tree=D,
        oracle=VerifierRuns(outcomes=(ProcessOutcome.SUCCEEDED,)),
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


ARM = ArmResult(
    outcome=Outcome.PASS, ending=ArmEnding.FINISHED, audit_clean=True, delivered=True, used=True, tokens=10,
    wall_seconds=1.0,
)  # fmt: skip


def record(
    completion: Completion = Completion.COMPLETED, control: ArmResult = ARM, treatment: ArmResult = ARM
) -> PairedAttempt:
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
        harness="claude-code",
        harness_version="2.1.332",
    )
    # an aborted record keeps its arms when they ran (an arm ended early); without one, the runner recorded none
    kept = completion is Completion.COMPLETED or {control.ending, treatment.ending} != {ArmEnding.FINISHED}
    return PairedAttempt(
        key=key,
        build=Build(label="b", sequence=1),
        attempt=1,
        completion=completion,
        control=control if kept else None,
        treatment=treatment if kept else None,
    )


def _arm(**update: object) -> ArmResult:
    return ARM.model_copy(update=update)


def _ended(ending: ArmEnding) -> PairedAttempt:
    """A pair whose treatment arm ended as ``ending``; the arms' results are kept, the pair is aborted."""
    return record(Completion.ABORTED, treatment=_arm(ending=ending, ending_note="as recorded"))


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
        ({"pair": pair(PairVerdict.PROBE_FAILED)}, ReasonCode.MEMORY_INVALID, "probe 'ledger' failed"),
        ({"record": record(Completion.ABORTED)}, ReasonCode.NOT_COMPLETED, "no result"),
        ({"record": _ended(ArmEnding.CRASHED)}, ReasonCode.APPARATUS_FAULT, "treatment arm crashed"),
        ({"record": _ended(ArmEnding.TIMED_OUT)}, ReasonCode.AGENT_TIMEOUT, "treatment arm timed-out"),
        ({"record": _ended(ArmEnding.HARNESS_FAILED)}, ReasonCode.HARNESS_FAILED, "treatment arm harness-failed"),
        ({"record": _ended(ArmEnding.CAPPED)}, ReasonCode.CAPPED, "treatment arm capped"),
        ({"record": record(control=_arm(tampered=("a hook record added",)))}, ReasonCode.TAMPERED, "hook record"),
        ({"record": record(control=_arm(received_phrases=("quartz",)))}, ReasonCode.CONTAMINATED, "quartz"),
        (
            {"record": record(control=_arm(foreign_channels=("exchange 0: MCP tool mcp__memory__search offered",)))},
            ReasonCode.CONTROL_CHANNEL,
            "mcp__memory__search offered",
        ),
        (
            {"record": record(treatment=_arm(foreign_channels=("message 4: instructions file /workspace/CLAUDE.md",)))},
            ReasonCode.UNINSTALLED_CHANNEL,
            "/workspace/CLAUDE.md",
        ),
        ({"record": record(treatment=_arm(delivered=False))}, ReasonCode.UNDELIVERED, "delivered nothing"),
        (
            {"record": record(treatment=_arm(delivered=False)), "undelivered": UndeliveredRule.OWN_ROW},
            ReasonCode.UNDELIVERED_OWN_ROW,
            "its own row",
        ),
        (
            {
                "record": record(treatment=_arm(delivered=False, received_phrases=())),
                "undelivered": UndeliveredRule.INCLUDE,
                "calibration": calibration(CalibrationVerdict.PASSES_UNTOUCHED),
            },
            ReasonCode.APPARATUS_FAULT,
            "untouched",
        ),
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
    assert excluded is not None and excluded[0] is ReasonCode.MEMORY_INVALID


def test_an_undelivered_treatment_preregistered_as_included_is_admitted(store: Store) -> None:
    undelivered = record(treatment=_arm(delivered=False))
    included = exclusion(
        certification(), calibration(), FENCE, pair(), undelivered, audits(store), UndeliveredRule.INCLUDE
    )
    assert included is None


def test_a_record_cannot_claim_completion_when_an_arm_did_not_finish() -> None:
    with pytest.raises(ValidationError, match="completed means both arms finished"):
        record(Completion.COMPLETED, treatment=_arm(ending=ArmEnding.TIMED_OUT))


def _rederivation(findings: tuple[str, ...] = ()) -> InjectedRederivation:
    return InjectedRederivation(
        system="memory", exchanges=D, events=2, rederived=(), received=1, not_covered=(), findings=findings, calls=(),
        seconds=0.1,
    )  # fmt: skip


def test_a_deterministic_memory_whose_injected_context_re_derives_may_be_admitted(store: Store) -> None:
    named = pair().model_copy(update={"rederivation": Digest.of(b"the receipt")})
    assert (
        exclusion(certification(), calibration(), FENCE, named, record(), audits(store), rederivation=_rederivation())
        is None
    )


def test_injected_context_that_does_not_re_derive_excludes_the_pair_naming_the_finding(store: Store) -> None:
    finding = "message 2: PostToolUse:Read context reached the model but is not what the memory re-derives: 'x'"
    named = pair().model_copy(update={"rederivation": Digest.of(b"the receipt")})
    excluded = exclusion(
        certification(), calibration(), FENCE, named, record(), audits(store), rederivation=_rederivation((finding,))
    )
    assert excluded == (ReasonCode.NOT_REDERIVED, f"1 finding(s) re-deriving what the memory supplied: {finding}")
    assert decide(D, record(), *excluded).decision is Admission.EXCLUDED


def test_a_memory_tool_result_the_restored_state_does_not_give_excludes_the_pair(store: Store) -> None:
    finding = "message 4: mcp__memory__search_nodes answered what the restored state does not: 'planted'"
    replay = ToolReplay(system="memory", exchanges=D, calls=(), findings=(finding,), output="", seconds=0.1)
    named = pair().model_copy(update={"replay": Digest.of(b"the replay")})
    excluded = exclusion(certification(), calibration(), FENCE, named, record(), audits(store), replay=replay)
    assert excluded == (ReasonCode.NOT_REDERIVED, f"1 finding(s) re-deriving what the memory supplied: {finding}")
    with pytest.raises(ContractError, match="replay"):
        exclusion(certification(), calibration(), FENCE, pair(), record(), audits(store), replay=replay)
    wrote = pair().model_copy(update={"state_findings": ("/opt/recall/state.sqlite is mounted read-only, yet...",)})
    assert exclusion(certification(), calibration(), FENCE, wrote, record(), audits(store))[0] is (  # type: ignore[index]
        ReasonCode.NOT_REDERIVED
    )


def test_a_treatment_reading_the_memory_s_state_by_its_own_tool_is_excluded(store: Store) -> None:
    reads = ("message 5: Bash toolu_1 carries the memory's state",)
    excluded = exclusion(certification(), calibration(), FENCE, pair(), record(treatment=_arm(state_reads=reads)),
                         audits(store))  # fmt: skip
    assert excluded is not None and excluded[0] is ReasonCode.STATE_READ and reads[0] in excluded[1]


@pytest.mark.parametrize("named", [True, False])
def test_a_pair_and_a_rederivation_that_do_not_go_together_are_refused(store: Store, named: bool) -> None:
    given = pair().model_copy(update={"rederivation": Digest.of(b"the receipt") if named else None})
    with pytest.raises(ContractError, match="re-derivation"):
        exclusion(
            certification(), calibration(), FENCE, given, record(), audits(store),
            rederivation=None if named else _rederivation(),
        )  # fmt: skip
