"""The ``paired-attempt`` stage: one attempt of one challenge, the shared control and every system's treatment.

Inputs: ``start`` (the prebuilt tree T2 every arm starts from), ``challenge`` (the ChallengeManifest document),
``fixture`` (the fixture directory as a tree: manifest and pinned artifacts), ``policy`` (the gateway policy
file's bytes, policy mode only), ``provisioners`` (each system's provisioner code, :mod:`bench.provision.code`,
read again here before anything is restored: a difference is refused), and the two gates: ``certification`` and
``calibration``. No container starts and
no token is spent unless the challenge certified and calibrated. The params carry the memory systems' declarations
(and their layer image IDs), the gateway mode and, in forward mode, the provider settings (variable names, prices,
caps: never a key). The attempt number is in the params, so a recorded attempt is never run again by a rerun, with
one exception: an attempt an arm of which its provider failed (``provider-failed``: the provider kept refusing or
erring, so the agent was never measured) is recorded for the run that made it, its pairs excluded with that reason,
and executed again by the next run (:func:`provider_failed`, the stage's retry judge).
With ``distractors`` (the ``distractor-pool`` stage's tree) every memory is restored from the evidence with that
pool beside it; ``oracle`` in the params names the challenge's oracle documents its retrieval is scored against.

Outputs: ``fence`` (the attempt's fence record), ``control`` (the shared control's ArmRecord), and per memory
system, keyed by its name: ``treatments`` (ArmRecords), ``snapshots`` (its receipt), ``spec_diffs`` (control
against that treatment) and ``pairs`` (the PairRecord with the pair's verdict); ``finals`` holds every arm's final
tree by condition (``control`` or the system's name), for the audit and the verifier; ``rederivations`` holds, for
each system whose restore declared deterministic retrieval, what its injected context re-derived to
(:mod:`.rederive_injected`), and ``retrievals`` what it retrieves for the challenge's prompt (:mod:`.retrieval_score`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from ..agent.arm import ArmRun
from ..agent.arm_record import ArmRecord, PairRecord
from ..agent.attempt import AttemptSetup, run_attempt
from ..agent.rederive_injected import InjectedRederivation
from ..agent.retrieval_score import RetrievalScore
from ..agent.spec_check import check_spec_diffs
from ..builder import SUPPLIED, Ports, StageContext, StageKind, stage
from ..contracts import BlobDigest, ContractModel, ImageId, PortablePath, Ref, TreeDigest
from ..errors import StageError
from ..fence import FenceRecord
from ..gateway import Mode
from ..gateway.metering import ArmStop
from ..harness import DEFAULT_HARNESS, HarnessName, default_unnamed, harness_named
from ..packaging.certify import CertificationReport, Verdict
from ..provision.code import ProvisionerCode, code_change, provisioner_code
from ..provision.fixture import Fixture, load_fixture, verify_artifact
from ..provision.messages import ArtifactRef
from ..provision.pool import seed_corpus
from ..provision.receipt import SnapshotReceipt
from ..sandbox.backends import SandboxBackend
from ..sandbox.layout import RUNNER_SCRATCH
from ..sandbox.spec import SpecDiffReceipt
from ..store import Store
from ..store.tarstream import export_tree
from ..suite.challenge import ChallengeManifest
from ..suite.forward import ForwardSettings
from ..suite.memory_system import MemorySystem
from .calibrate import CalibrationReport, require_calibrated

__all__ = ["AttemptInputs", "AttemptOutputs", "PairedAttemptParams", "paired_attempt", "provider_failed"]


class PairedAttemptParams(ContractModel):
    challenge_id: str
    attempt: int = Field(ge=1)
    model: str = Field(min_length=1)
    image_id: ImageId  # the agent image (the control's, and that of every system without a layer)
    suite_dir: str = Field(min_length=1)  # relative to where the run starts: provisioner paths resolve against it
    graph_arm: str = Field(min_length=1)  # which of the fixture's graph states every memory is restored with
    systems: tuple[MemorySystem, ...] = Field(min_length=1)
    layers: dict[str, ImageId] = Field(default_factory=dict)  # system name -> its layer image
    gateway_mode: Mode
    forward: ForwardSettings | None = None
    oracle: tuple[PortablePath, ...] = ()  # the challenge's oracle documents (evidence paths)
    harness: HarnessName = DEFAULT_HARNESS  # the coding agent every arm runs

    @model_serializer(mode="wrap")
    def _default_harness_unnamed(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The default harness is left out, so the invocations of a suite that names none keep their keys."""
        return default_unnamed(handler(self))


class AttemptInputs(Ports):
    start: TreeDigest
    challenge: Annotated[Ref[ChallengeManifest], SUPPLIED]
    fixture: Annotated[TreeDigest, SUPPLIED]
    distractors: TreeDigest | None = None  # the pool seeded beside the evidence, when the run has one
    policy: Annotated[BlobDigest | None, SUPPLIED] = None
    provisioners: Annotated[dict[str, Ref[ProvisionerCode]], SUPPLIED]  # system name -> its provisioner's code
    certification: Ref[CertificationReport]
    calibration: Ref[CalibrationReport]


class AttemptOutputs(Ports):
    fence: Ref[FenceRecord]
    control: Ref[ArmRecord]
    treatments: dict[str, Ref[ArmRecord]]
    finals: dict[str, TreeDigest]
    snapshots: dict[str, Ref[SnapshotReceipt]]
    spec_diffs: dict[str, Ref[SpecDiffReceipt]]
    pairs: dict[str, Ref[PairRecord]]
    rederivations: dict[str, Ref[InjectedRederivation]]
    retrievals: dict[str, Ref[RetrievalScore]]


def provider_failed(store: Store, outputs: AttemptOutputs) -> str | None:
    """Why a later run must execute this attempt again: an arm its provider failed; None for any other ending."""
    for condition, arm in {"control": outputs.control, **outputs.treatments}.items():
        record = store.get_document(arm, ArmRecord)
        if record.stop is ArmStop.PROVIDER_FAILED and record.started:
            return f"the provider failed the {condition} arm; the attempt was not measured, so a rerun retries it"
    return None


@stage("paired-attempt", version=6, kind=StageKind.OBSERVED, checks=check_spec_diffs, retry=provider_failed)
def paired_attempt(context: StageContext, inputs: AttemptInputs, params: PairedAttemptParams) -> AttemptOutputs:
    store = context.store
    _require_gates(store, inputs)
    _require_keyed_code(store, inputs, params)
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
        mode=params.gateway_mode,
        policy=store.get_bytes(inputs.policy) if inputs.policy is not None else None,
        forward=params.forward,
        harness=harness_named(params.harness),
    )
    with tempfile.TemporaryDirectory(prefix=RUNNER_SCRATCH["fixture"]) as scratch:
        root = Path(scratch) / "fixture"
        export_tree(store, inputs.fixture, root)
        fixture = load_fixture(root)
        setup = AttemptSetup(
            suite_root=Path(params.suite_dir),
            fixture_root=root,
            fixture=fixture,
            graph_arm=params.graph_arm,
            image_id=params.image_id,
            systems=params.systems,
            layers=params.layers,
            corpus=_seeded(store, inputs.distractors, root, fixture, Path(scratch)),
            oracle=params.oracle,
        )
        done = run_attempt(run, setup, params.attempt)
    return AttemptOutputs.model_validate(
        {
            "fence": done.fence,
            "control": done.control,
            "treatments": done.treatments,
            "finals": done.finals,
            "snapshots": done.snapshots,
            "spec_diffs": done.spec_diffs,
            "pairs": done.pairs,
            "rederivations": done.rederivations,
            "retrievals": done.retrievals,
        },
        strict=False,
    )


def _require_keyed_code(store: Store, inputs: AttemptInputs, params: PairedAttemptParams) -> None:
    """Refuse to restore anything unless every system's provisioner code is the code the key names."""
    for system in params.systems:
        keyed = inputs.provisioners.get(system.name)
        if keyed is None:
            raise StageError(f"paired-attempt: no provisioner code is keyed for memory system {system.name!r}")
        now = provisioner_code(store, system, Path(params.suite_dir))
        if store.put_document(now) != keyed:
            change = code_change(store.get_document(keyed, ProvisionerCode), now)
            raise StageError(f"paired-attempt: {change} since the plan was made; run again to plan with it")


def _seeded(
    store: Store, distractors: TreeDigest | None, root: Path, fixture: Fixture, scratch: Path
) -> ArtifactRef | None:
    """The evidence (verified against the fixture's pin) with the pool beside it; None without a pool."""
    if distractors is None:
        return None
    export_tree(store, distractors, scratch / "pool")
    return seed_corpus(verify_artifact(root, fixture.evidence_corpus), scratch / "pool", scratch / "evidence")


def _require_gates(store: Store, inputs: AttemptInputs) -> None:
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
