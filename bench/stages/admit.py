"""The ``admit`` stage: completed is not admitted. Each record gets a decision with a reason code.

The reasons are checked in the order a reader would ask them: was the challenge allowed to run at all
(certification, calibration), did the money fence stop it, did both arms finish (each way of not finishing has its
own code: :mod:`.ending`), was the memory actually there (the snapshot verdict: an empty memory is an invalid
pair, never a clean null), is what a deterministic memory injected what it re-derives from its restored state
(:mod:`bench.agent.rederive_injected`: a difference means the delivery evidence is not the memory system's, so the
pair is excluded, as a tampered one is), is each arm's evidence the harness's own (its gateway conversation chained
from the runner's prompts, its session file agreeing: tampered), did a memory channel the arm's attachment did not
install reach either arm's model (the control's own, or a treatment's beyond its attachment), did either arm's tree
stay inside the allowlist (a dirty audit is thrown out, as the seed did, never scored as a FAIL), did the control
arm receive a memory phrase (contaminated), and did the treatment deliver anything (what an undelivered treatment
means is preregistered: excluded, excluded under its own code, or, on a low-memory control, counted as the expected
null). Only a record that passes all of them is admitted. Excluded records are kept whole.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..agent.arm_ending import not_completed
from ..agent.arm_record import PairRecord
from ..agent.rederive_injected import InjectedRederivation
from ..agent.replay_tools import ToolReplay
from ..analysis.admission import AdmissionDecision, ReasonCode, decide
from ..analysis.attempt_record import ArmResult, PairedAttempt
from ..analysis.prereg import UndeliveredRule
from ..builder import Ports, StageContext, StageKind, stage
from ..contracts import ContractModel, Ref
from ..errors import ContractError
from ..fence import FenceOutcome, FenceRecord
from ..packaging.certify import CertificationReport, Verdict
from ..provision.receipt import PairVerdict
from .audit import AuditReceipt
from .calibrate import CalibrationReport, CalibrationVerdict

__all__ = ["AdmitInputs", "AdmitOutputs", "AdmitParams", "admit", "exclusion"]


class AdmitParams(ContractModel):
    """What the preregistration decided before any outcome was seen."""

    undelivered: UndeliveredRule


def _channels(arms: Mapping[str, ArmResult]) -> tuple[ReasonCode, str] | None:
    """A memory channel the arm's attachment did not install that reached its model: the control's, a treatment's."""
    if arms["control"].foreign_channels:
        found = "; ".join(arms["control"].foreign_channels[:3])
        return ReasonCode.CONTROL_CHANNEL, f"a memory channel reached the control arm's model: {found}"
    if arms["treatment"].foreign_channels:
        found = "; ".join(arms["treatment"].foreign_channels[:3])
        return ReasonCode.UNINSTALLED_CHANNEL, f"the treatment's model got channels its attachment lacks: {found}"
    return None


def _validity(
    record: PairedAttempt, audits: Mapping[str, AuditReceipt], undelivered: UndeliveredRule
) -> tuple[ReasonCode, str] | None:
    """The exclusions a completed record can still have: tampered, a memory channel the arm's attachment did not
    install (the control's, or a treatment's), the treatment reading the memory's state by a tool of its own, dirty
    audit, contaminated, undelivered."""
    arms: dict[str, ArmResult] = {"control": record.control, "treatment": record.treatment}  # type: ignore[dict-item]
    for name, arm in arms.items():
        if arm.tampered:
            return ReasonCode.TAMPERED, f"the {name} arm's evidence is not the harness's: {arm.tampered[0]}"
    channels = _channels(arms)
    if channels is not None:
        return channels
    if arms["treatment"].state_reads:
        found = "; ".join(arms["treatment"].state_reads[:3])
        return ReasonCode.STATE_READ, f"the treatment's agent read the memory's state by a tool of its own: {found}"
    dirty = {arm: [m.path for m in audit.mutations if not m.allowed] for arm, audit in sorted(audits.items())}
    named = "; ".join(f"{arm} arm changed {', '.join(paths)}" for arm, paths in dirty.items() if paths)
    if named:
        return ReasonCode.AUDIT_DIRTY, f"outside allowed_output_paths: {named}"
    if arms["control"].received_phrases:
        return ReasonCode.CONTAMINATED, f"the control arm received {list(arms['control'].received_phrases)}"
    if not arms["treatment"].delivered and undelivered is not UndeliveredRule.INCLUDE:
        if undelivered is UndeliveredRule.OWN_ROW:
            return ReasonCode.UNDELIVERED_OWN_ROW, "the treatment delivered nothing; reported in its own row"
        return ReasonCode.UNDELIVERED, "the treatment delivered nothing; preregistered as excluded"
    return None


def exclusion(
    certification: CertificationReport,
    calibration: CalibrationReport,
    fence: FenceRecord,
    pair: PairRecord,
    record: PairedAttempt,
    audits: Mapping[str, AuditReceipt],
    undelivered: UndeliveredRule = UndeliveredRule.EXCLUDE,
    rederivation: InjectedRederivation | None = None,
    replay: ToolReplay | None = None,
) -> tuple[ReasonCode, str] | None:
    """Why the record must be excluded, or None when it may be admitted. ``audits`` are the arms' mutation audits
    by arm ("control", "treatment"); ``rederivation`` is the pair's re-derived injected context (the pair record
    names it when its memory declared deterministic retrieval) and ``replay`` its memory-tool results replayed
    over the state restore left (named when the treatment called its memory's tools)."""
    if certification.verdict is not Verdict.CERTIFIED:
        return ReasonCode.CERTIFICATION_FAILED, f"certification verdict {certification.verdict.value}"
    if calibration.verdict is not CalibrationVerdict.CALIBRATED:
        return ReasonCode.APPARATUS_FAULT, f"calibration verdict {calibration.verdict.value}"
    if fence.outcome is FenceOutcome.STOPPED:
        return ReasonCode.FENCE_STOPPED, "the money fence stopped the pair"
    unfinished = not_completed({"control": record.control, "treatment": record.treatment})
    if unfinished is not None:
        return unfinished
    if pair.verdict is not PairVerdict.VALID:
        return ReasonCode.MEMORY_INVALID, f"memory snapshot {pair.verdict.value}: {'; '.join(pair.reasons)}"
    named = (("rederivation", "a re-derivation of its injected context", pair.rederivation, rederivation),
             ("replay", "a replay of its memory-tool results", pair.replay, replay))  # fmt: skip
    for field, what, digest, given in named:
        if (digest is None) != (given is None):
            raise ContractError(
                f"the pair record names {what} only if one is given to admit it",
                field=field,
                expected=digest,
                actual=None if given is None else what,
            )
    found = [
        *(rederivation.findings if rederivation is not None else ()),
        *(replay.findings if replay is not None else ()),
        *pair.state_findings,
        *(record.treatment.not_rederived if record.treatment is not None else ()),
    ]
    if found:
        return ReasonCode.NOT_REDERIVED, f"{len(found)} finding(s) re-deriving what the memory supplied: {found[0]}"
    return _validity(record, audits, undelivered)


class AdmitInputs(Ports):
    record: Ref[PairedAttempt]
    pair: Ref[PairRecord]
    certification: Ref[CertificationReport]
    calibration: Ref[CalibrationReport]
    control_audit: Ref[AuditReceipt]
    treatment_audit: Ref[AuditReceipt]


class AdmitOutputs(Ports):
    admission: Ref[AdmissionDecision]


@stage("admit", version=5, kind=StageKind.DETERMINISTIC)
def admit(context: StageContext, inputs: AdmitInputs, params: AdmitParams) -> AdmitOutputs:
    store = context.store
    record = store.get_document(inputs.record, PairedAttempt)
    pair = store.get_document(inputs.pair, PairRecord)
    excluded = exclusion(
        store.get_document(inputs.certification, CertificationReport),
        store.get_document(inputs.calibration, CalibrationReport),
        store.get_document(pair.fence, FenceRecord),
        pair,
        record,
        {
            "control": store.get_document(inputs.control_audit, AuditReceipt),
            "treatment": store.get_document(inputs.treatment_audit, AuditReceipt),
        },
        params.undelivered,
        None if pair.rederivation is None else store.get_document(pair.rederivation, InjectedRederivation),
        None if pair.replay is None else store.get_document(pair.replay, ToolReplay),
    )
    reason, note = excluded or (ReasonCode.PREREGISTERED_COMPLETE, "completed under an unmoved preregistration")
    return AdmitOutputs(admission=store.put_document(decide(inputs.record, record, reason, note)))
