"""The ``paired-attempt`` stage: one attempt of one challenge, both arms, as an observed store action.

Inputs: ``start`` (the prebuilt tree T2 both arms start from), ``challenge`` (the ChallengeManifest document),
``fixture`` (the fixture directory as a tree: manifest and pinned artifacts), ``policy`` (the gateway policy
file's bytes), and the two gates: ``certification`` and ``calibration``. No container starts and no token is spent
unless the challenge certified and calibrated. The attempt number is in the params, so a recorded attempt is never
run again by a rerun.

Outputs: ``spec_diff``, ``fence``, ``control`` and ``treatment`` (ArmRecords), ``control_final`` and
``treatment_final`` (their final trees, for the audit and the verifier), ``snapshot`` (the memory's receipt) and
``pair`` (the PairRecord with the pair's verdict).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from pydantic import Field

from ..contracts import BlobDigest, ContractModel, ImageId, Ref, TreeDigest
from ..errors import StageError
from ..fence.fence_record import FenceRecord
from ..packaging.certify import CertificationReport, Verdict
from ..provision.fixture import load_fixture
from ..provision.receipt import SnapshotReceipt
from ..sandbox.backends import SandboxBackend
from ..sandbox.calibrate import CalibrationReport, require_calibrated
from ..sandbox.spec import SpecDiffReceipt
from ..stages import Ports, StageContext, StageKind, stage
from ..store import Store
from ..store.tarstream import export_tree
from ..suite.challenge import ChallengeManifest
from .arm import ArmRun
from .arm_record import ArmRecord, PairRecord
from .pair import run_pair

__all__ = ["PairInputs", "PairOutputs", "PairedAttemptParams", "paired_attempt"]


class PairedAttemptParams(ContractModel):
    challenge_id: str
    attempt: int = Field(ge=1)
    model: str = Field(min_length=1)
    image_id: ImageId  # the agent image
    graph_arm: str = Field(min_length=1)  # which of the fixture's graph states the memory is restored with


class PairInputs(Ports):
    start: TreeDigest
    challenge: Ref[ChallengeManifest]
    fixture: TreeDigest
    policy: BlobDigest
    certification: Ref[CertificationReport]
    calibration: Ref[CalibrationReport]


class PairOutputs(Ports):
    spec_diff: Ref[SpecDiffReceipt]
    fence: Ref[FenceRecord]
    control: Ref[ArmRecord]
    treatment: Ref[ArmRecord]
    control_final: TreeDigest
    treatment_final: TreeDigest
    snapshot: Ref[SnapshotReceipt]
    pair: Ref[PairRecord]


@stage("paired-attempt", version=2, kind=StageKind.OBSERVED)
def paired_attempt(context: StageContext, inputs: PairInputs, params: PairedAttemptParams) -> PairOutputs:
    store = context.store
    _require_gates(store, inputs)
    challenge = store.get_document(inputs.challenge, ChallengeManifest)
    if challenge.challenge_id != params.challenge_id:
        raise StageError(
            f"paired-attempt params name challenge {params.challenge_id!r} but the challenge input is "
            f"{challenge.challenge_id!r}; pass the matching manifest"
        )
    run = ArmRun(
        backend=context.service(SandboxBackend),
        start=inputs.start,
        challenge=challenge,
        model=params.model,
        policy=store.get_bytes(inputs.policy),
    )
    with tempfile.TemporaryDirectory(prefix="fx-") as scratch:
        root = Path(scratch) / "fixture"
        export_tree(store, inputs.fixture, root)
        _, outputs = run_pair(run, params.image_id, root, load_fixture(root), params.graph_arm, params.attempt)
    for arm in ("control", "treatment"):
        outputs[f"{arm}_final"] = store.get_document(outputs[arm], ArmRecord).final
    return PairOutputs.model_validate(outputs, strict=False)


def _require_gates(store: Store, inputs: PairInputs) -> None:
    """Refuse to start unless certification passed and calibration showed the verifier tells work from none."""
    certification = store.get_document(inputs.certification, CertificationReport)
    checked = {surface.surface: surface.digest for surface in certification.surfaces}
    if checked.get("challenge") != inputs.challenge:
        raise StageError("the certification report checked another challenge than this attempt's; re-certify")
    if certification.verdict is not Verdict.CERTIFIED:
        raise StageError(
            f"certification verdict is {certification.verdict.value} with {len(certification.findings)} finding(s); "
            "no arm starts on an uncertified challenge: see `stele-bench certify` for the findings"
        )
    calibration = store.get_document(inputs.calibration, CalibrationReport)
    if calibration.start != inputs.start:
        raise StageError(f"calibration ran on {calibration.start}, not on this attempt's start tree; re-calibrate")
    require_calibrated(calibration)
