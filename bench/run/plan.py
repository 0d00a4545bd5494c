"""A suite manifest as a run plan: every stage invocation from the pinned commit to the published bundle.

    corpus -> redact -> per challenge: certify, prebuild -> calibrate
      -> per attempt: paired-attempt (both arms) -> per arm: verify, audit -> grade
      -> paired-record -> admit
    -> bundle -> publish

Every invocation is made through its stage's declaration (:class:`~bench.pipeline.builder.PlanBuilder`), so a
link to an output a stage does not declare, or of another type, is refused here, before doit runs anything.

Building the plan observes the suite's files: it checks every pin and the preregistrations (a moved frozen input
refuses the whole run before anything starts), and stores the runner-owned sources the stages read (fixture,
challenge documents, verifiers, policies, preregistrations), so every stage input is a digest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..agent.arm_record import Condition
from ..agent.paired_attempt import PairedAttemptParams, PairOutputs, paired_attempt
from ..analysis.attempt_record import Build, ComparabilityKey
from ..contracts import Digest, ImageId, TreeDigest
from ..errors import SandboxError
from ..packaging.certify import CertifyParams, certify
from ..packaging.corpus import corpus, corpus_params
from ..packaging.redact import RedactOutputs, RedactParams, redact
from ..packaging.surfaces import FixtureSurfaces, challenge_inputs, fixture_inputs
from ..pipeline.builder import Handle, Link, PlanBuilder
from ..pipeline.plan import Plan
from ..sandbox.audit import AuditParams, audit_stage
from ..sandbox.calibrate import CalibrateOutputs, CalibrateParams, calibrate_stage
from ..sandbox.images.registry import ImageName, find_image
from ..sandbox.layout import WORKSPACE
from ..sandbox.prebuild import PrebuildOutputs, PrebuildParams, prebuild_stage
from ..sandbox.verify import VerifyParams, verify_stage
from ..stages import NoParams
from ..stages.code import store_code_manifest
from ..store import Store, tree_from_directory
from ..suite.suite import LoadedChallenge, Suite, open_suite
from .admit import admit
from .bundle import bundle
from .grade import GradeOutputs, GradeParams, grade_stage
from .paired_record import RecordParams, paired_record
from .prereg import current_preregistration
from .publish import PublishParams, publish_stage

__all__ = ["SuiteRun", "suite_plan"]

ARMS = (Condition.CONTROL, Condition.TREATMENT)
CONTROL_CONDITION = "no-memory"


@dataclass(frozen=True)
class SuiteRun:
    """What one plan needs besides the suite: where it runs and how many attempts it makes."""

    store: Store
    suite: Suite
    root: Path  # the suite directory, relative to where the plan runs (params hold no host paths)
    preregistrations: Path
    attempts: int
    build_sequence: int
    image_id: ImageId
    fixture: TreeDigest


@dataclass
class _Published:
    """What the bundle takes: records and admissions by label, and files by their bundle path."""

    records: dict[str, Link] = field(default_factory=dict)
    admissions: dict[str, Link] = field(default_factory=dict)
    files: dict[str, Link | Digest] = field(default_factory=dict)


def _agent_image() -> ImageId:
    record = find_image(ImageName.AGENT)
    if record is None:
        raise SandboxError("no agent image is built; run `stele-bench image build agent` (the demo does it for you)")
    return ImageId(record.image_id)


def suite_plan(base: Path, store: Store, suite: str, attempts: int | None = None, build_sequence: int = 1) -> Plan:
    """The plan of the suite at ``base/suite``; paths in params stay relative to ``base`` (no host paths)."""
    opened = open_suite(base / suite)
    root = Path(suite)
    with store.batch():
        fixture_tree = tree_from_directory(store, base / root / opened.manifest.fixture.path)
        surfaces = fixture_inputs(store, base / root / opened.manifest.fixture.path, opened.fixture)
    run = SuiteRun(
        store=store,
        suite=opened,
        root=root,
        preregistrations=base / "manifests" / opened.manifest.suite_id,
        attempts=attempts or opened.manifest.attempts,
        build_sequence=build_sequence,
        image_id=_agent_image(),
        fixture=fixture_tree,
    )
    plan = PlanBuilder()
    project = opened.manifest.project
    corpus_run = plan.add(
        "corpus", corpus, corpus_params(str(root / project.bundle), project.commit, project.repository)
    )
    redacted = plan.add(
        "redact", redact, RedactParams(extra_paths=opened.fixture.redact_paths), tree=corpus_run["tree"]
    )
    published = _Published()
    for loaded in opened.challenges:
        _challenge(plan, run, loaded, redacted, surfaces, published)
    bundled = plan.add(
        "bundle", bundle, NoParams(), records=published.records, admissions=published.admissions, files=published.files
    )
    plan.add(
        "publish",
        publish_stage,
        PublishParams(confidence="0.95"),
        bundle=bundled["bundle"],
        refs={"published": f"published/{opened.manifest.suite_id}"},
    )
    return plan.build(store)


def _challenge(
    plan: PlanBuilder,
    run: SuiteRun,
    loaded: LoadedChallenge,
    redacted: Handle[RedactOutputs],
    surfaces: FixtureSurfaces,
    published: _Published,
) -> None:
    """Certify, prebuild and calibrate once, then every attempt's pair, arms, record and admission."""
    store, manifest = run.store, loaded.manifest
    name = manifest.challenge_id
    prereg = current_preregistration(run.suite, loaded, run.preregistrations, run.attempts)
    owned = challenge_inputs(store, loaded.directory, manifest)
    challenge_dir = str(run.root / loaded.entry.directory)
    certified = plan.add(
        f"certify-{name}",
        certify,
        CertifyParams(),
        source=redacted["tree"],
        evidence=surfaces.evidence,
        graph=dict(surfaces.graph),
        challenge=owned.challenge,
        runner={**surfaces.runner, **owned.runner},
    )
    prebuilt = plan.add(
        f"prebuild-{name}",
        prebuild_stage,
        PrebuildParams(image_id=run.image_id, environment=manifest.environment),
        redacted=redacted["tree"],
    )
    calibrated = plan.add(
        f"calibrate-{name}",
        calibrate_stage,
        CalibrateParams(
            challenge_dir=challenge_dir,
            verifier_sha256=manifest.verifier.asset.sha256,
            oracle_sha256=manifest.oracle.asset.sha256 if manifest.oracle else None,
            image_id=run.image_id,
        ),
        start=prebuilt["start"],
    )
    published.files[f"receipts/{name}/certification.json"] = certified["report"]
    published.files[f"receipts/{name}/calibration.json"] = calibrated["calibration"]
    key = ComparabilityKey(
        challenge=name,
        fixture=run.fixture,
        model=run.suite.manifest.model,
        control_condition=CONTROL_CONDITION,
        treatment_condition=f"reference-memory:{run.suite.manifest.fixture.graph_arm}",
        manifest=prereg.digest,
        verifier=owned.runner["verifier"],
        source_commit=run.suite.manifest.project.commit,
    )
    build = Build(label=f"reference-memory@{_memory_build(store)}", sequence=run.build_sequence)
    policy = store.put_bytes(run.suite.policy(name, WORKSPACE))
    gates = _Gates(owned.challenge, policy, prebuilt, certified["report"], calibrated)
    for attempt in range(1, run.attempts + 1):
        pair, grades = _attempt(plan, run, loaded, attempt, gates, published)
        record = plan.add(
            f"record-{name}-{attempt}",
            paired_record,
            RecordParams(key=key, build=build),
            pair=pair["pair"],
            control=grades[Condition.CONTROL]["grade"],
            treatment=grades[Condition.TREATMENT]["grade"],
        )
        admission = plan.add(
            f"admit-{name}-{attempt}",
            admit,
            NoParams(),
            record=record["record"],
            pair=pair["pair"],
            certification=certified["report"],
            calibration=calibrated["calibration"],
        )
        published.records[f"{name}-{attempt}"] = record["record"]
        published.admissions[f"{name}-{attempt}"] = admission["admission"]
    prereg_path = f"{name}/v{prereg.version}.json"
    published.files[f"manifests/{prereg_path}"] = store.put_bytes((run.preregistrations / prereg_path).read_bytes())


@dataclass(frozen=True)
class _Gates:
    """What every attempt of one challenge shares: its document, policy, start tree and gates."""

    challenge: Digest
    policy: Digest
    prebuilt: Handle[PrebuildOutputs]
    certification: Link
    calibrated: Handle[CalibrateOutputs]


def _attempt(
    plan: PlanBuilder, run: SuiteRun, loaded: LoadedChallenge, attempt: int, gates: _Gates, published: _Published
) -> tuple[Handle[PairOutputs], dict[Condition, Handle[GradeOutputs]]]:
    """One attempt: the pair, then each arm's verifier run, audit and grade."""
    manifest = loaded.manifest
    name = manifest.challenge_id
    pair = plan.add(
        f"pair-{name}-{attempt}",
        paired_attempt,
        PairedAttemptParams(
            challenge_id=name,
            attempt=attempt,
            model=run.suite.manifest.model,
            image_id=run.image_id,
            graph_arm=run.suite.manifest.fixture.graph_arm,
        ),
        start=gates.prebuilt["start"],
        certification=gates.certification,
        calibration=gates.calibrated["calibration"],
        challenge=gates.challenge,
        fixture=run.fixture,
        policy=gates.policy,
    )
    published.files[f"receipts/{name}/{attempt}/snapshot.json"] = pair["snapshot"]
    memory = run.suite.memory(name)
    challenge_dir = str(run.root / loaded.entry.directory)
    grades: dict[Condition, Handle[GradeOutputs]] = {}
    for arm in ARMS:
        label = f"{name}-{attempt}-{arm.value}"
        final = pair[f"{arm.value}_final"]
        verified = plan.add(
            f"verify-{label}",
            verify_stage,
            VerifyParams(
                challenge_dir=challenge_dir,
                verifier_sha256=manifest.verifier.asset.sha256,
                image_id=run.image_id,
                attempt=attempt,
            ),
            final=final,
        )
        audited = plan.add(
            f"audit-{label}",
            audit_stage,
            AuditParams(allowed_output_paths=manifest.allowed_output_paths),
            start=gates.prebuilt["start"],
            final=final,
        )
        graded = grades[arm] = plan.add(
            f"grade-{label}",
            grade_stage,
            GradeParams(memory=memory),
            arm=pair[arm.value],
            verifier=verified["verifier"],
            audit=audited["audit"],
        )
        receipts = f"receipts/{name}/{attempt}/{arm.value}"
        published.files[f"{receipts}-verifier.json"] = verified["verifier"]
        published.files[f"{receipts}-audit.json"] = audited["audit"]
        published.files[f"{receipts}-grade.json"] = graded["grade"]
    return pair, grades


def _memory_build(store: Store) -> str:
    """The build under test: the reference memory system's own code, named by its code digest."""
    return store_code_manifest(store, "bench.memory.provisioner").hex[:12]
