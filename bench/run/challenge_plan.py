"""One challenge of a suite plan: certify, prebuild and calibrate once, then every attempt's pair, its arms'
verifier runs, audits and grades, each system's record and admission, and the attempt's page."""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.attempt_record import Build, ComparabilityKey
from ..analysis.prereg import FrozenInputs, Preregistration
from ..contracts import Digest, DigestValue, PortablePath
from ..contracts.checked_files import read_bounded
from ..packaging.certify import CertifyOutputs, CertifyParams
from ..packaging.redact import RedactOutputs
from ..packaging.surfaces import ChallengeSurfaces, FixtureSurfaces, challenge_inputs
from ..pipeline.builder import Handle, Link, PlanBuilder
from ..sandbox.layout import WORKSPACE
from ..stages.admit import AdmitParams, admit
from ..stages.audit import AuditOutputs, AuditParams, audit
from ..stages.calibrate import CalibrateOutputs, CalibrateParams, calibrate
from ..stages.certify import certify
from ..stages.grade import GradeOutputs, GradeParams, grade
from ..stages.paired_attempt import AttemptOutputs, PairedAttemptParams, paired_attempt
from ..stages.paired_record import RecordParams, paired_record
from ..stages.prebuild import PrebuildOutputs, PrebuildParams, prebuild
from ..stages.verify import VerifyParams, verify
from ..stages.view import ViewParams, page_label, view
from ..stages.workspace_identity import GIT_DIRECTORY
from ..suite.memory_system import CONTROL, MemorySystem
from ..suite.suite import LoadedChallenge, Suite
from .arm_memory import grading_memory, view_memory
from .pools import Variant
from .prereg_freeze import current_preregistration
from .suite_run import CONTROL_CONDITION, Published, SuiteRun, policy_mode

__all__ = ["plan_challenge"]


def _identity_paths(suite: Suite) -> tuple[PortablePath, ...]:
    """With a declared identity the ``.git`` is the agent's as in any clone: ``git status`` alone rewrites its
    index. What it holds never reaches the verifier's result, which reads the worktree."""
    return (PortablePath(GIT_DIRECTORY),) if suite.manifest.project.identity is not None else ()


def plan_challenge(
    plan: PlanBuilder,
    run: SuiteRun,
    loaded: LoadedChallenge,
    redacted: Handle[RedactOutputs],
    workspace: Link,
    surfaces: FixtureSurfaces,
    published: Published,
) -> None:
    """Certify, prebuild and calibrate once, then every attempt's pair, arms, record and admission."""
    name = loaded.manifest.challenge_id
    prereg = current_preregistration(run.suite, loaded, run.preregistrations, run.attempts)
    gates = _gates(plan, run, loaded, (redacted, workspace, surfaces), prereg, published)
    _attempts(plan, run, loaded, gates, published)
    prereg_path = f"{name}/v{prereg.version}.json"
    frozen = run.store.put_bytes(read_bounded(run.preregistrations / prereg_path, "the preregistration"))
    published.preregistrations[f"{name}/v{prereg.version}"] = frozen
    published.files[f"manifests/{prereg_path}"] = frozen


def _certify(
    plan: PlanBuilder,
    run: SuiteRun,
    name: str,
    redacted: Handle[RedactOutputs],
    surfaces: FixtureSurfaces,
    owned: ChallengeSurfaces,
) -> Handle[CertifyOutputs]:
    return plan.add(
        f"certify-{name}",
        certify,
        CertifyParams(memory_phrases=run.suite.fixture.memory_phrases),
        source=redacted["tree"],
        evidence=surfaces.evidence,
        distractors=run.pools[max(run.pools)],  # the largest pool: every smaller one is its prefix
        graph=dict(surfaces.graph),
        challenge=owned.challenge,
        runner={**surfaces.runner, **owned.runner},
        labels={"challenge": name},
    )


def _gates(
    plan: PlanBuilder,
    run: SuiteRun,
    loaded: LoadedChallenge,
    sources: tuple[Handle[RedactOutputs], Link, FixtureSurfaces],
    prereg: Preregistration,
    published: Published,
) -> _Gates:
    """The challenge's certification, start tree and calibration (each a receipt in the bundle): what every attempt
    shares. ``sources``: the redacted corpus, the workspace tree made from it, and the fixture's surfaces."""
    redacted, workspace, surfaces = sources
    store, manifest = run.store, loaded.manifest
    name = manifest.challenge_id
    owned = challenge_inputs(store, loaded.directory, manifest)
    challenge_dir = str(run.root / loaded.entry.directory)
    certified = _certify(plan, run, name, redacted, surfaces, owned)
    prebuilt = plan.add(
        f"prebuild-{name}",
        prebuild,
        PrebuildParams(image_id=run.image_id, environment=manifest.environment),
        redacted=workspace,
        labels={"challenge": name},
    )
    calibrated = plan.add(
        f"calibrate-{name}",
        calibrate,
        CalibrateParams(
            challenge_dir=challenge_dir,
            verifier_sha256=manifest.verifier.asset.sha256,
            oracle_sha256=manifest.oracle.asset.sha256 if manifest.oracle else None,
            image_id=run.image_id,
            verifier_repeats=prereg.frozen.calibration.verifier_repeats,
        ),
        redacted=workspace,
        start=prebuilt["start"],
        labels={"challenge": name},
    )
    published.files[f"receipts/{name}/certification.json"] = certified["report"]
    published.files[f"receipts/{name}/calibration.json"] = calibrated["calibration"]
    policy = store.put_bytes(run.suite.policy(name, WORKSPACE)) if policy_mode(run) else None
    return _Gates(
        owned.challenge,
        policy,
        prebuilt,
        certified["report"],
        calibrated,
        prereg.frozen,
        prereg.digest,
        owned.runner["verifier"],
    )


@dataclass(frozen=True)
class _Gates:
    """What every attempt of one challenge shares: its document, policy, start tree and gates."""

    challenge: Digest
    policy: Digest | None  # policy mode only
    prebuilt: Handle[PrebuildOutputs]
    certification: Link
    calibrated: Handle[CalibrateOutputs]
    frozen: FrozenInputs  # the preregistration's budget and analysis plan
    manifest: Digest  # the preregistration itself
    verifier: Digest


def _attempts(plan: PlanBuilder, run: SuiteRun, loaded: LoadedChallenge, gates: _Gates, published: Published) -> None:
    """Every attempt at every pool size: its pair and arms, each system's record and admission, its page."""
    name = loaded.manifest.challenge_id
    for size in sorted(run.pools):
        variant = Variant(name, size, len(run.pools) > 1)
        for attempt in range(1, run.attempts + 1):
            pair, grades, audits = _attempt(plan, run, loaded, variant, attempt, gates, published)
            admissions = {}
            for system in run.systems:
                key = _key(run, name, system, gates, size)
                placed = (variant, attempt)
                admissions[system.name] = _record(
                    plan, run, system, key, placed, pair, grades, audits, gates, published
                )
            _view(plan, run, variant, attempt, grades, admissions, published)


def _key(run: SuiteRun, challenge: str, system: MemorySystem, gates: _Gates, distractors: int) -> ComparabilityKey:
    """What makes one system's data points the same question: never its version, which is the build under test."""
    suite = run.suite.manifest
    return ComparabilityKey(
        challenge=challenge,
        fixture=DigestValue(run.fixture),  # the key names its parts by value: nothing follows them
        model=run.model,
        gateway_mode=suite.gateway_mode,
        policy=None if gates.policy is None else DigestValue(gates.policy),
        control_condition=CONTROL_CONDITION,
        treatment_condition=f"{system.name}:{suite.fixture.graph_arm}",
        manifest=DigestValue(gates.manifest),
        verifier=DigestValue(gates.verifier),
        source_commit=suite.project.commit,
        distractors=distractors,
        harness=run.harness.name,
        harness_version=run.harness.version,
    )


def _record(
    plan: PlanBuilder,
    run: SuiteRun,
    system: MemorySystem,
    key: ComparabilityKey,
    placed: tuple[Variant, int],
    pair: Handle[AttemptOutputs],
    grades: dict[str, Handle[GradeOutputs]],
    audits: dict[str, Handle[AuditOutputs]],
    gates: _Gates,
    published: Published,
) -> Link:
    """One system's pair of one attempt (``placed``: at which pool size, which attempt): its durable record and
    the admission decision about it (returned)."""
    variant, attempt = placed
    label = f"{variant.label}-{attempt}-{system.name}"
    labels = {"challenge": variant.label, "attempt": str(attempt), "memory": system.name}
    record = plan.add(
        f"record-{label}",
        paired_record,
        RecordParams(
            key=key, build=Build(label=system.condition, sequence=run.build_sequence), budget=gates.frozen.budget
        ),
        pair=pair[f"pairs/{system.name}"],
        control=grades[CONTROL]["grade"],
        treatment=grades[system.name]["grade"],
        labels=labels,
    )
    admission = plan.add(
        f"admit-{label}",
        admit,
        AdmitParams(undelivered=gates.frozen.analysis.undelivered_treatment),
        record=record["record"],
        pair=pair[f"pairs/{system.name}"],
        certification=gates.certification,
        calibration=gates.calibrated["calibration"],
        labels=labels,
        control_audit=audits[CONTROL]["audit"],
        treatment_audit=audits[system.name]["audit"],
    )
    published.records[label] = record["record"]
    published.admissions[label] = admission["admission"]
    return admission["admission"]


def _attempt_params(run: SuiteRun, name: str, attempt: int) -> PairedAttemptParams:
    manifest = run.suite.manifest
    return PairedAttemptParams(
        oracle=manifest.challenge(name).oracle,
        challenge_id=name,
        attempt=attempt,
        model=run.model,
        image_id=run.image_id,
        suite_dir=str(run.root),
        graph_arm=manifest.fixture.graph_arm,
        systems=run.systems,
        layers=run.layers,
        gateway_mode=manifest.gateway_mode,
        forward=manifest.forward,
        harness=run.harness.name,
    )


def _attempt(
    plan: PlanBuilder,
    run: SuiteRun,
    loaded: LoadedChallenge,
    variant: Variant,
    attempt: int,
    gates: _Gates,
    published: Published,
) -> tuple[Handle[AttemptOutputs], dict[str, Handle[GradeOutputs]], dict[str, Handle[AuditOutputs]]]:
    """One attempt at one pool size: the shared control and every treatment, then each arm's verifier run, audit
    and grade."""
    manifest = loaded.manifest
    name = manifest.challenge_id
    pair = plan.add(
        f"pair-{variant.label}-{attempt}",
        paired_attempt,
        _attempt_params(run, name, attempt),
        start=gates.prebuilt["start"],
        certification=gates.certification,
        calibration=gates.calibrated["calibration"],
        challenge=gates.challenge,
        fixture=run.fixture,
        distractors=run.pools[variant.distractors],
        policy=gates.policy,
        provisioners=dict(run.provisioners),
        labels={"challenge": variant.label, "attempt": str(attempt)},
    )
    arms = {
        condition: _arm(plan, run, loaded, (variant, attempt), condition, pair, gates, published)
        for condition in (CONTROL, *(system.name for system in run.systems))
    }
    grades = {c: graded for c, (graded, _) in arms.items()}
    return pair, grades, {c: audited for c, (_, audited) in arms.items()}


def _view(
    plan: PlanBuilder,
    run: SuiteRun,
    variant: Variant,
    attempt: int,
    grades: dict[str, Handle[GradeOutputs]],
    admissions: dict[str, Link],
    published: Published,
) -> None:
    """The attempt's transcript page: every arm's grade, and each system's admission."""
    label = page_label(variant.label, attempt)
    name = variant.challenge
    page = plan.add(
        f"view-{label}",
        view,
        ViewParams(challenge=name, attempt=attempt, memory=view_memory(run, name)),
        grades={condition: graded["grade"] for condition, graded in grades.items()},
        admissions=admissions,
    )
    published.pages[label] = page["page"]


def _verify_params(run: SuiteRun, loaded: LoadedChallenge, attempt: int) -> VerifyParams:
    return VerifyParams(
        challenge_dir=str(run.root / loaded.entry.directory),
        verifier_sha256=loaded.manifest.verifier.asset.sha256,
        image_id=run.image_id,
        attempt=attempt,
    )


def _arm(
    plan: PlanBuilder,
    run: SuiteRun,
    loaded: LoadedChallenge,
    placed: tuple[Variant, int],
    condition: str,
    pair: Handle[AttemptOutputs],
    gates: _Gates,
    published: Published,
) -> tuple[Handle[GradeOutputs], Handle[AuditOutputs]]:
    """One arm of an attempt (the control or a system's treatment): its verifier run, audit and grade."""
    manifest = loaded.manifest
    variant, attempt = placed
    name = variant.label
    label = f"{name}-{attempt}-{condition}"
    labels = {"challenge": name, "attempt": str(attempt), "arm": condition}
    final = pair[f"finals/{condition}"]
    verified = plan.add(f"verify-{label}", verify, _verify_params(run, loaded, attempt), final=final, labels=labels)
    audited = plan.add(
        f"audit-{label}",
        audit,
        AuditParams(allowed_output_paths=manifest.allowed_output_paths + _identity_paths(run.suite)),
        start=gates.prebuilt["start"],
        final=final,
        labels=labels,
    )
    graded = plan.add(
        f"grade-{label}",
        grade,
        GradeParams(memory=grading_memory(run, manifest.challenge_id, condition)),
        arm=pair["control"] if condition == CONTROL else pair[f"treatments/{condition}"],
        verifier=verified["verifier"],
        audit=audited["audit"],
        labels=labels,
    )
    receipts = f"receipts/{name}/{attempt}/{condition}"
    published.files[f"{receipts}-verifier.json"] = verified["verifier"]
    published.files[f"{receipts}-audit.json"] = audited["audit"]
    published.files[f"{receipts}-grade.json"] = graded["grade"]
    if condition != CONTROL:
        published.files[f"{receipts}-snapshot.json"] = pair[f"snapshots/{condition}"]
    return graded, audited
