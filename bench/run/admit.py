"""The ``admit`` stage: completed is not admitted. Each record gets a decision with a reason code.

The reasons are checked in the order a reader would ask them: was the challenge allowed to run at all
(certification, calibration), did the money fence stop it, was the memory actually there (the snapshot
verdict: an empty memory is an invalid pair, never a clean null), did the runner finish, and did either arm's tree
stay inside the allowlist (a dirty audit is thrown out, as the seed did, never scored as a FAIL). Only a record that
passes all of them is admitted. Excluded records are kept whole.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..agent.arm_record import PairRecord
from ..analysis.admission import AdmissionDecision, ReasonCode, decide
from ..analysis.attempt_record import Completion, PairedAttempt
from ..contracts import Ref
from ..fence.fence_record import FenceOutcome, FenceRecord
from ..packaging.certify import CertificationReport, Verdict
from ..provision.receipt import PairVerdict
from ..sandbox.audit import AuditReceipt
from ..sandbox.calibrate import CalibrationReport, CalibrationVerdict
from ..stages import NoParams, Ports, StageContext, StageKind, stage

__all__ = ["AdmitInputs", "AdmitOutputs", "admit", "exclusion"]


def exclusion(
    certification: CertificationReport,
    calibration: CalibrationReport,
    fence: FenceRecord,
    pair: PairRecord,
    record: PairedAttempt,
    audits: Mapping[str, AuditReceipt],
) -> tuple[ReasonCode, str] | None:
    """Why the record must be excluded, or None when it may be admitted. ``audits`` are the arms' mutation audits
    by arm ("control", "treatment")."""
    if certification.verdict is not Verdict.CERTIFIED:
        return ReasonCode.CERTIFICATION_FAILED, f"certification verdict {certification.verdict.value}"
    if calibration.verdict is not CalibrationVerdict.CALIBRATED:
        return ReasonCode.APPARATUS_FAULT, f"calibration verdict {calibration.verdict.value}"
    if fence.outcome is FenceOutcome.STOPPED:
        return ReasonCode.FENCE_STOPPED, "the money fence stopped the pair"
    if pair.verdict is not PairVerdict.VALID:
        return ReasonCode.APPARATUS_FAULT, f"memory snapshot {pair.verdict.value}: {'; '.join(pair.reasons)}"
    if record.completion is not Completion.COMPLETED:
        return ReasonCode.NOT_COMPLETED, "the runner did not finish both arms"
    dirty = {arm: [m.path for m in audit.mutations if not m.allowed] for arm, audit in sorted(audits.items())}
    named = "; ".join(f"{arm} arm changed {', '.join(paths)}" for arm, paths in dirty.items() if paths)
    if named:
        return ReasonCode.AUDIT_DIRTY, f"outside allowed_output_paths: {named}"
    return None


class AdmitInputs(Ports):
    record: Ref[PairedAttempt]
    pair: Ref[PairRecord]
    certification: Ref[CertificationReport]
    calibration: Ref[CalibrationReport]
    control_audit: Ref[AuditReceipt]
    treatment_audit: Ref[AuditReceipt]


class AdmitOutputs(Ports):
    admission: Ref[AdmissionDecision]


@stage("admit", version=3, kind=StageKind.DETERMINISTIC)
def admit(context: StageContext, inputs: AdmitInputs, params: NoParams) -> AdmitOutputs:
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
    )
    reason, note = excluded or (ReasonCode.PREREGISTERED_COMPLETE, "completed under an unmoved preregistration")
    return AdmitOutputs(admission=store.put_document(decide(inputs.record, record, reason, note)))
