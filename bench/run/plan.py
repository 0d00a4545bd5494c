"""A suite manifest as a run plan: every stage invocation from the pinned commit to the published bundle.

    corpus -> redact -> [distractor-pool per pool size] -> per challenge: certify, prebuild -> calibrate
      -> per pool size, per attempt: paired-attempt (the shared control, one treatment per memory system)
         -> per arm: verify, audit -> grade; -> view (the attempt's transcript page)
         -> per memory system: paired-record (control and that system's treatment) -> admit
    -> analyze -> report -> bundle (with the lineage of everything in it) -> publish

Any suite directory makes a plan: every path the suite names is relative to it, and paths in params are relative
to ``base`` (where the pipeline runs), so the same code plans the bundled example or a suite elsewhere.

Every invocation is made through its stage's declaration (:class:`~bench.pipeline.builder.PlanBuilder`), so a
link to an output a stage does not declare, or of another type, is refused here, before doit runs anything.

Building the plan observes the suite's files: it checks every pin and the preregistrations (a moved frozen input
refuses the whole run before anything starts), finds every memory system's provisioner and reads its code (an input
of every paired attempt: bench.provision.code), builds (or reuses) every declared image layer and pins its ID, and
stores the runner-owned sources the stages read (fixture, challenge documents, verifiers, policies,
preregistrations), so every stage input is a digest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..agent.harness_files import container_path
from ..agent.paired_attempt import AttemptOutputs, PairedAttemptParams, paired_attempt
from ..agent.sealed_env import installed_hooks, needed_channels
from ..analysis.attempt_record import Build, ComparabilityKey
from ..analysis.prereg import FrozenInputs
from ..contracts import Digest, DigestValue, ImageId, PortablePath, TreeDigest
from ..contracts.checked_files import read_bounded
from ..errors import SandboxError, UsageError
from ..gateway.config import Mode
from ..grading.memory import MemoryDeclaration
from ..harness import Harness, harness_named, require_channels, require_native_settings
from ..packaging.certify import CertifyParams, certify
from ..packaging.corpus import corpus, corpus_params
from ..packaging.redact import RedactOutputs, RedactParams, redact
from ..packaging.surfaces import FixtureSurfaces, challenge_inputs, fixture_inputs
from ..pipeline.builder import Handle, Link, PlanBuilder
from ..pipeline.plan import Plan
from ..provision.code import store_code
from ..publish.bundle import ATTEMPT_PAGES, REPORT_PATH, SUMMARY_PATH
from ..sandbox.audit import AuditOutputs, AuditParams, audit_stage
from ..sandbox.calibrate import CalibrateOutputs, CalibrateParams, calibrate_stage
from ..sandbox.images.build import build_layer
from ..sandbox.images.registry import ImageName, find_image
from ..sandbox.layout import WORKSPACE
from ..sandbox.prebuild import PrebuildOutputs, PrebuildParams, prebuild_stage
from ..sandbox.verify import VerifyParams, verify_stage
from ..sandbox.workspace_identity import GIT_DIRECTORY, IdentityParams, workspace_identity
from ..stages import NoParams
from ..store import Store, tree_from_directory
from ..suite.memory_system import CONTROL, MemorySystem, resolve_provisioner
from ..suite.suite import LoadedChallenge, Suite, open_suite
from .admit import AdmitParams, admit
from .analyze import AnalyzeParams, analyze
from .bundle import bundle
from .grade import GradeOutputs, GradeParams, grade_stage
from .paired_record import RecordParams, paired_record
from .pools import Variant, pool_invocations
from .prereg import current_preregistration
from .publish import publish_stage
from .report import ReportParams, report
from .view import ViewParams, page_label, view

__all__ = ["SuiteRun", "arm_memory", "suite_plan"]

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
    layers: dict[str, ImageId]  # memory system name -> its layer image, for systems that declare one
    provisioners: dict[str, Digest]  # memory system name -> its provisioner's code (a ProvisionerCode)
    selected: tuple[str, ...] = ()  # the memory systems to run (`run --memory`); empty: every declared one
    pools: dict[int, Link | None] = field(default_factory=dict)  # pool size -> its distractor-pool tree (0: none)

    @property
    def harness(self) -> Harness:
        return harness_named(self.suite.manifest.harness)

    @property
    def systems(self) -> tuple[MemorySystem, ...]:
        """The systems to run, each as the suite's harness runs it (an instructions file placed where it reads it)."""
        declared = self.suite.manifest.memory_systems
        instructions = str(container_path(self.harness.instructions_path))
        return tuple(s.placed(instructions) for s in declared if not self.selected or s.name in self.selected)


@dataclass
class _Published:
    """What the bundle takes: records and admissions by label, and files by their bundle path."""

    records: dict[str, Link] = field(default_factory=dict)
    admissions: dict[str, Link] = field(default_factory=dict)
    files: dict[str, Link | Digest] = field(default_factory=dict)
    pages: dict[str, Link] = field(default_factory=dict)  # attempt label -> its transcript page
    preregistrations: dict[str, Digest] = field(default_factory=dict)  # "<challenge>/v<N>" -> its frozen bytes


def _agent_image() -> ImageId:
    record = find_image(ImageName.AGENT)
    if record is None:
        raise SandboxError("no agent image is built; run `stele-bench image build agent` (the demo does it for you)")
    return ImageId(record.image_id)


def _selected(suite: Suite, memory: Sequence[str]) -> tuple[str, ...]:
    """The systems ``memory`` names, each one the suite declares; refused naming those it does declare."""
    declared = [system.name for system in suite.manifest.memory_systems]
    unknown = [name for name in memory if name not in declared]
    if unknown:
        raise UsageError(
            f"--memory {', '.join(unknown)}: suite {suite.manifest.suite_id!r} declares no such memory system "
            f"(it declares: {', '.join(declared)})",
            field="memory",
            expected=declared,
            actual=unknown,
        )
    return tuple(dict.fromkeys(memory))


def _layers(suite: Suite, selected: tuple[str, ...]) -> dict[str, ImageId]:
    """Find every provisioner, and build (or reuse) every declared image layer, before anything runs."""
    layers: dict[str, ImageId] = {}
    for system in suite.manifest.memory_systems:
        if selected and system.name not in selected:
            continue
        resolve_provisioner(system, suite.root)
        if system.attachment.image is not None:
            layers[system.name] = ImageId(build_layer(system.attachment.image).record.image_id)
    return layers


def suite_plan(
    base: Path,
    store: Store,
    suite: str,
    attempts: int | None = None,
    build_sequence: int = 1,
    memory: Sequence[str] = (),
) -> Plan:
    """The plan of the suite at ``base/suite``; paths in params stay relative to ``base`` (no host paths).
    ``memory`` selects among the suite's declared memory systems (default: all of them)."""
    opened = open_suite(base / suite)
    selected = _selected(opened, memory)
    harness = harness_named(opened.manifest.harness)
    for system in opened.manifest.memory_systems:
        if not selected or system.name in selected:
            who = f"memory system {system.name!r}"
            require_native_settings(harness, system.attachment.settings is not None, who)
            require_channels(harness, needed_channels(harness, system.attachment), who)
    root = Path(suite)
    with store.batch():
        fixture_tree = tree_from_directory(store, base / root / opened.manifest.fixture.path)
        surfaces = fixture_inputs(store, base / root / opened.manifest.fixture.path, opened.fixture)
    plan = PlanBuilder()
    pools = pool_invocations(plan, store, opened, base / root / opened.manifest.fixture.path)
    run = SuiteRun(
        store=store,
        suite=opened,
        root=root,
        preregistrations=base / "manifests" / opened.manifest.suite_id,
        attempts=attempts or opened.manifest.attempts,
        build_sequence=build_sequence,
        image_id=_agent_image(),
        fixture=fixture_tree,
        layers=_layers(opened, selected),
        provisioners={
            system.name: store_code(store, system, opened.root)
            for system in opened.manifest.memory_systems
            if not selected or system.name in selected
        },
        selected=selected,
        pools=pools,
    )
    project = opened.manifest.project
    corpus_run = plan.add(
        "corpus", corpus, corpus_params(str(root / project.bundle), project.commit, project.repository)
    )
    redacted = plan.add(
        "redact", redact, RedactParams(extra_paths=opened.fixture.redact_paths), tree=corpus_run["tree"]
    )
    workspace = _workspace(plan, opened, redacted["tree"])
    published = _Published()
    for loaded in opened.challenges:
        _challenge(plan, run, loaded, redacted, workspace, surfaces, published)
    records, admissions = published.records, published.admissions
    summary = plan.add(
        "analyze",
        analyze,
        AnalyzeParams(confidence="0.95"),
        records=records,
        admissions=admissions,
        preregistrations=published.preregistrations,
    )
    rendered = plan.add(
        "report",
        report,
        ReportParams(suite=opened.manifest.suite_id, harness=run.harness.label),
        records=records,
        admissions=admissions,
        summary=summary["summary"],
        pages=published.pages,
    )
    published.files.update({f"{ATTEMPT_PAGES}/{label}.html": page for label, page in published.pages.items()})
    published.files[SUMMARY_PATH] = summary["summary"]
    published.files[REPORT_PATH] = rendered["report"]
    bundled = plan.add("bundle", bundle, NoParams(), records=records, admissions=admissions, files=published.files)
    plan.add(
        "publish",
        publish_stage,
        NoParams(),
        bundle=bundled["bundle"],
        refs={"published": f"published/{opened.manifest.suite_id}"},
    )
    return plan.build(store)


def _workspace(plan: PlanBuilder, opened: Suite, redacted: Link) -> Link:
    """What prebuild starts from: the redacted tree, with the declared repository identity's ``.git`` if any."""
    identity = opened.manifest.project.identity
    if identity is None:
        return redacted
    params = IdentityParams(remote_url=identity.remote_url, default_branch=identity.default_branch)
    return plan.add("workspace-identity", workspace_identity, params, tree=redacted)["tree"]


def _identity_paths(suite: Suite) -> tuple[PortablePath, ...]:
    """With a declared identity the ``.git`` is the agent's as in any clone: ``git status`` alone rewrites its
    index. What it holds never reaches the verifier's result, which reads the worktree."""
    return (PortablePath(GIT_DIRECTORY),) if suite.manifest.project.identity is not None else ()


def _challenge(
    plan: PlanBuilder,
    run: SuiteRun,
    loaded: LoadedChallenge,
    redacted: Handle[RedactOutputs],
    workspace: Link,
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
        CertifyParams(memory_phrases=run.suite.fixture.memory_phrases),
        source=redacted["tree"],
        evidence=surfaces.evidence,
        distractors=run.pools[max(run.pools)],  # the largest pool: every smaller one is its prefix
        graph=dict(surfaces.graph),
        challenge=owned.challenge,
        runner={**surfaces.runner, **owned.runner},
        labels={"challenge": name},
    )
    prebuilt = plan.add(
        f"prebuild-{name}",
        prebuild_stage,
        PrebuildParams(image_id=run.image_id, environment=manifest.environment),
        redacted=workspace,
        labels={"challenge": name},
    )
    calibrated = plan.add(
        f"calibrate-{name}",
        calibrate_stage,
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
    policy = store.put_bytes(run.suite.policy(name, WORKSPACE)) if _policy_mode(run) else None
    gates = _Gates(owned.challenge, policy, prebuilt, certified["report"], calibrated, prereg.frozen)
    for size in sorted(run.pools):
        variant = Variant(name, size, len(run.pools) > 1)
        for attempt in range(1, run.attempts + 1):
            pair, grades, audits = _attempt(plan, run, loaded, variant, attempt, gates, published)
            admissions = {}
            for system in run.systems:
                key = _key(run, name, system, policy, prereg.digest, owned.runner["verifier"], size)
                placed = (variant, attempt)
                admissions[system.name] = _record(
                    plan, run, system, key, placed, pair, grades, audits, gates, published
                )
            _view(plan, run, variant, attempt, grades, admissions, published)
    prereg_path = f"{name}/v{prereg.version}.json"
    frozen = store.put_bytes(read_bounded(run.preregistrations / prereg_path, "the preregistration"))
    published.preregistrations[f"{name}/v{prereg.version}"] = frozen
    published.files[f"manifests/{prereg_path}"] = frozen


@dataclass(frozen=True)
class _Gates:
    """What every attempt of one challenge shares: its document, policy, start tree and gates."""

    challenge: Digest
    policy: Digest | None  # policy mode only
    prebuilt: Handle[PrebuildOutputs]
    certification: Link
    calibrated: Handle[CalibrateOutputs]
    frozen: FrozenInputs  # the preregistration's budget and analysis plan


def _key(
    run: SuiteRun,
    challenge: str,
    system: MemorySystem,
    policy: Digest | None,
    manifest: Digest,
    verifier: Digest,
    distractors: int,
) -> ComparabilityKey:
    """What makes one system's data points the same question: never its version, which is the build under test."""
    suite = run.suite.manifest
    return ComparabilityKey(
        challenge=challenge,
        fixture=DigestValue(run.fixture),  # the key names its parts by value: nothing follows them
        model=suite.model,
        gateway_mode=suite.gateway_mode,
        policy=None if policy is None else DigestValue(policy),
        control_condition=CONTROL_CONDITION,
        treatment_condition=f"{system.name}:{suite.fixture.graph_arm}",
        manifest=DigestValue(manifest),
        verifier=DigestValue(verifier),
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
    published: _Published,
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


def _policy_mode(run: SuiteRun) -> bool:
    return run.suite.manifest.gateway_mode is Mode.POLICY


def _attempt_params(run: SuiteRun, name: str, attempt: int) -> PairedAttemptParams:
    manifest = run.suite.manifest
    return PairedAttemptParams(
        oracle=manifest.challenge(name).oracle,
        challenge_id=name,
        attempt=attempt,
        model=manifest.model,
        image_id=run.image_id,
        suite_dir=str(run.root),
        graph_arm=manifest.fixture.graph_arm,
        systems=run.systems,
        layers=run.layers,
        gateway_mode=manifest.gateway_mode,
        forward=manifest.forward,
        harness=manifest.harness,
    )


def arm_memory(
    base: MemoryDeclaration, systems: Sequence[MemorySystem], harness: Harness, hooks: bool = True
) -> MemoryDeclaration:
    """``base`` (what the fixture and challenge say) with the channels ``systems`` install under ``harness``: their
    MCP servers, the first one's hooks (``hooks``), where their state is mounted and the instructions file it is
    mounted as."""
    servers = tuple(sorted({server for system in systems for server in system.tool_servers}))
    installed = installed_hooks(harness, systems[0].attachment) if hooks and systems else ()
    state = tuple(sorted({mount.target for system in systems for mount in system.attachment.mounts}))
    static = tuple(path for path in state if path == str(container_path(harness.instructions_path)))
    update = {"tool_servers": servers, "hooks": installed, "state_paths": state, "static_files": static}
    return base.model_copy(update=update)


def _memory(run: SuiteRun, challenge: str, systems: Sequence[MemorySystem], hooks: bool) -> MemoryDeclaration:
    return arm_memory(run.suite.memory(challenge), systems, run.harness, hooks)


def _grading_memory(run: SuiteRun, challenge: str, condition: str) -> MemoryDeclaration:
    """What grading looks for in one arm: the channels its attachment installed. The control has none, so nothing
    reaching it counts as memory, and any channel that shows there anyway (a server, a file, a hook of the agent's
    own making) is one its attachment did not install (:func:`bench.grading.delivery.foreign_channels`)."""
    systems = () if condition == CONTROL else tuple(system for system in run.systems if system.name == condition)
    return _memory(run, challenge, systems, hooks=True)


def _view_memory(run: SuiteRun, challenge: str) -> MemoryDeclaration:
    """What an attempt's page shows of every arm: the phrases, and every system's tools and files."""
    return _memory(run, challenge, run.systems, hooks=False)


def _attempt(
    plan: PlanBuilder,
    run: SuiteRun,
    loaded: LoadedChallenge,
    variant: Variant,
    attempt: int,
    gates: _Gates,
    published: _Published,
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
    published: _Published,
) -> None:
    """The attempt's transcript page: every arm's grade, and each system's admission."""
    label = page_label(variant.label, attempt)
    name = variant.challenge
    page = plan.add(
        f"view-{label}",
        view,
        ViewParams(challenge=name, attempt=attempt, memory=_view_memory(run, name)),
        grades={condition: graded["grade"] for condition, graded in grades.items()},
        admissions=admissions,
    )
    published.pages[label] = page["page"]


def _arm(
    plan: PlanBuilder,
    run: SuiteRun,
    loaded: LoadedChallenge,
    placed: tuple[Variant, int],
    condition: str,
    pair: Handle[AttemptOutputs],
    gates: _Gates,
    published: _Published,
) -> tuple[Handle[GradeOutputs], Handle[AuditOutputs]]:
    """One arm of an attempt (the control or a system's treatment): its verifier run, audit and grade."""
    manifest = loaded.manifest
    variant, attempt = placed
    name = variant.label
    label = f"{name}-{attempt}-{condition}"
    labels = {"challenge": name, "attempt": str(attempt), "arm": condition}
    final = pair[f"finals/{condition}"]
    verified = plan.add(
        f"verify-{label}",
        verify_stage,
        VerifyParams(
            challenge_dir=str(run.root / loaded.entry.directory),
            verifier_sha256=manifest.verifier.asset.sha256,
            image_id=run.image_id,
            attempt=attempt,
        ),
        final=final,
        labels=labels,
    )
    audited = plan.add(
        f"audit-{label}",
        audit_stage,
        AuditParams(allowed_output_paths=manifest.allowed_output_paths + _identity_paths(run.suite)),
        start=gates.prebuilt["start"],
        final=final,
        labels=labels,
    )
    graded = plan.add(
        f"grade-{label}",
        grade_stage,
        GradeParams(memory=_grading_memory(run, manifest.challenge_id, condition)),
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
