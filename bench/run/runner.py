"""The suite run, the use case `demo` and `run` call: check the suite, build the images, run its plan through doit,
export and verify. Typed in (:class:`SuiteRequest`), typed out (:class:`SuiteRunResult`); progress lines go to a
callable, so the command line only parses and renders.

1. The suite is opened and every challenge's preregistration checked (the attempts asked for included) before
   anything starts, so a mistake is one line; the plan is then built and checked in this process too.
2. doit runs ``python -m bench.run.dodo`` from the directory the plan's paths start at, with the project's store
   and doit database named explicitly, so the working directory changes nothing; its progress lines (the
   reporter, :mod:`bench.pipeline.progress`) go to stderr, and stdout stays the command's result. With
   ``--executor ray://HEAD:PORT`` each invocation runs as a Ray task on a cluster node (doit's workers are then
   threads that wait on the cluster), and the images are archived into the store (which every node opens:
   ``--store s3://...``) so each node loads the very image IDs the plan pins. When every stage of the plan built
   in step 1 is already cached and every ref it names already holds its output, doit would run and move nothing:
   its process is not started, and the same tally and headline are said here.
3. What executed is read back from the store's action log; the published tree is exported into the project,
   signed with the project's key (``keys/publisher.key``, made by the first run; bench/publish/signing.py),
   verified trusting that key's public half, and the run recorded (``runs/<suite>/<start>``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..analysis.prereg import load_preregistrations
from ..contracts import TreeDigest
from ..errors import ContractError, StageError, UsageError
from ..images import ImageName, build_image
from ..images.build import build_agent, build_layer
from ..pipeline.executor_choice import parse_executor
from ..pipeline.failure import PipelineStopped, read_failure
from ..pipeline.plan import Plan
from ..pipeline.progress import TaskView, elapsed
from ..pipeline.runtime import Runtime
from ..pipeline.status import Freshness, InvocationStatus, plan_status
from ..project import Project
from ..provision.code import require_code_pin
from ..publish.manifest import MANIFEST_NAME
from ..publish.release import sign
from ..publish.signing import PublicKey, generate_key, load_private_key, load_public_key, public_key_path
from ..publish.verification import Trust, Verification, verify
from ..run_lease import run_lease
from ..sandbox import default_backend
from ..scaffold.unwritten import refuse_unwritten
from ..stop_signals import STOP_SIGNALS, Interrupted, end_child
from ..store import Store, export_tree
from ..store.actions import ActionKey, recorded_from
from ..suite.suite import Suite, open_suite
from .bundle_in_place import export_versions, manifest_in_place
from .catalogue import STAGES, runtime
from .dodo import plan_variables
from .narrate import SuiteNarrator
from .run_record import RunRecord, record_run

__all__ = [
    "Progress",
    "SuiteRequest",
    "SuiteRunResult",
    "export_published",
    "project_key",
    "publish_verified",
    "run_suite",
]

Progress = Callable[[str], None]  # where progress lines go (the command line: stderr)


@dataclass(frozen=True)
class SuiteRequest:
    """One suite run: the suite (relative to ``base``, where the plan's paths start) and how to run it."""

    project: Project
    store: str  # the store's location, as every process opens it (bench.cli.locate.store_path)
    command: str  # what runs it, named in the project's run lease ("demo", "run")
    base: Path
    suite: Path
    attempts: int | None
    memory: tuple[str, ...]
    jobs: int
    published: Path | None  # where the bundle is exported; None: the project's published/<suite>
    executor: str = "local"  # where invocations run (bench.pipeline.executor_choice.parse_executor)
    wait: bool = True  # for another run of the project to finish (False: refuse, naming it)
    debug: bool = False  # doit says more of a failure
    harness: str | None = None  # the harness every arm runs (`--harness`); None: the suite's own


@dataclass(frozen=True)
class SuiteRunResult:
    """What a suite run did: the stages it executed (one name per action), its run record, the verified bundle."""

    suite_id: str
    store: str
    run: str  # the ref of its RunRecord
    executed: tuple[str, ...]
    published: Path
    verification: Verification


def _preflight(request: SuiteRequest) -> Suite:
    """Everything that can be refused without a container: the suite, its templates, its preregistrations."""
    suite = open_suite(request.base / request.suite)
    refuse_unwritten(suite, request.suite)
    manifest = suite.manifest
    manifest.model_for(request.harness or manifest.harness)  # a harness the suite has no model for: refused now
    declared = [system.name for system in manifest.memory_systems]
    unknown = [name for name in request.memory if name not in declared]
    if unknown:
        raise UsageError(
            f"--memory {' '.join(unknown)}: suite {manifest.suite_id!r} declares no such memory system",
            field="--memory",
            expected=declared,
            actual=unknown,
            hint=f"choose among: {', '.join(declared)}",
        )
    for system in manifest.memory_systems:
        if not request.memory or system.name in request.memory:
            require_code_pin(system, suite.root, request.suite.as_posix())
    directory = request.base / "manifests" / manifest.suite_id
    frozen = load_preregistrations(directory) if directory.is_dir() else {}
    for loaded in suite.challenges:
        versions = frozen.get(loaded.manifest.challenge_id)
        if not versions:
            raise ContractError(
                f"challenge {loaded.manifest.challenge_id} has no preregistration under {directory}",
                hint=f"freeze one with `stele-bench prereg freeze {request.suite}` before running it",
            )
        most = versions[-1].frozen.budget.attempts
        if request.attempts is not None and request.attempts > most:
            raise UsageError(
                f"--attempts {request.attempts}: the preregistration of {loaded.manifest.challenge_id} "
                f"(v{versions[-1].version}) allows at most {most}",
                field="--attempts",
                expected=f"1 to {most}",
                actual=request.attempts,
                hint="ask for fewer, or write a corrected preregistration",
            )
    return suite


def _variables(request: SuiteRequest, store: Store) -> dict[str, str]:
    variables = {"suite": request.suite.as_posix(), "store": store.location}
    if request.attempts is not None:
        variables["attempts"] = str(request.attempts)
    if request.memory:
        variables["memory"] = ",".join(request.memory)
    if request.harness is not None:
        variables["harness"] = request.harness
    return variables


def _verb(built: bool) -> str:
    return "built" if built else "reused"


def _images(progress: Progress, suite: Suite, request: SuiteRequest, archive: Store | None) -> None:
    """The images the plan pins, built (or found) here so that the wait is announced before the stages start: the
    agent image of the harness the suite runs under, each memory system's layer on it; with ``archive`` (a cluster
    run) the agent image and the layers are kept in the store for every node."""
    harness = request.harness or suite.manifest.harness
    progress(f"image {ImageName.BASE.value}: building unless built (the first build takes a few minutes)")
    base = build_image(ImageName.BASE)
    progress(f"image {ImageName.BASE.value}: {base.record.image_id[:19]} ({_verb(base.built)})")
    progress(f"image agent of {harness}: building unless built (the first build takes a few minutes)")
    agent = build_agent(harness, store=archive)
    progress(f"image agent of {harness}: {agent.record.image_id[:19]} ({_verb(agent.built)})")
    for system in suite.manifest.memory_systems:
        if system.attachment.image is not None and (not request.memory or system.name in request.memory):
            progress(f"image layer of {system.name}: building unless built")
            layer = build_layer(system.attachment.image, store=archive, harness=harness)
            progress(f"image layer of {system.name}: {layer.record.image_id[:19]} ({_verb(layer.built)})")


def _all_cached(plan: Plan, runtime: Runtime, store: Store) -> list[InvocationStatus] | None:
    """Each invocation's status when every one is up to date by the rule doit's check applies
    (:mod:`bench.pipeline.status`) and every ref the plan names already holds its output: doit would execute
    nothing and move nothing, so its process (a second build of the plan) is not started. None otherwise, a ref
    another run moved included: doit runs."""
    statuses = plan_status(plan, runtime)
    if any(status.freshness is not Freshness.UP_TO_DATE for status in statuses):
        return None
    outputs = {status.name: status.outputs for status in statuses}
    placed = all(
        store.get_ref(ref) == outputs[invocation.name].get(output)
        for invocation in plan.invocations
        for output, ref in invocation.refs.items()
    )
    return statuses if placed else None


def _say_cached(progress: Progress, statuses: list[InvocationStatus], store: Store, started: float) -> None:
    """What doit's reporter says of a run whose every stage is cached: the tally, then the headline."""
    views = [
        TaskView(
            status.name, status.stage, status.labels, store.location, {k: str(v) for k, v in status.outputs.items()}
        )
        for status in statuses
    ]
    took = elapsed(time.time() - started)
    progress(f"{len(views)} stages in {took}: 0 ran, {len(views)} cached, 0 failed")
    for line in SuiteNarrator().finale(views):
        progress(line)


def _run_doit(request: SuiteRequest, variables: dict[str, str], debug: bool) -> None:
    """The pipeline process, from ``base``; its output on stderr so that stdout stays the command's result. The
    error that stopped it is raised here as what it was (:mod:`bench.pipeline.failure`), and a stop signal it alone
    received as that stop."""
    with tempfile.TemporaryDirectory(prefix="stele-bench-failure-") as scratch:
        failure = Path(scratch) / "failure.json"
        code = _doit_process(request, {**variables, "failure": str(failure)}, debug)
        if code == 0:
            return
        stopped = PipelineStopped(read_failure(failure), code)
    signals = {128 + number: number for number in STOP_SIGNALS}
    if stopped.cause is None and code in signals:
        raise Interrupted(signals[code])
    raise stopped


def _doit_process(request: SuiteRequest, variables: dict[str, str], debug: bool) -> int:
    command = [sys.executable, "-m", "bench.run.dodo", "-n", str(request.jobs)]
    command += ["--db-file", str(_doit_db(request.project))]
    if debug:
        command += ["--failure-verbosity", "2"]
    command += [f"{name}={value}" for name, value in variables.items()]
    if request.executor != "local":  # doit's workers only wait on the cluster: threads, sharing one Ray connection
        command += ["-P", "thread", f"executor={request.executor}"]
    # This interpreter's directory first on PATH, as an activated virtual environment has it: a provisioner
    # declared as `python3 -m ...` (the bundled reference memory) then runs where stele-bench is installed, even
    # from a venv nobody activated.
    here = str(Path(sys.executable).parent)
    environment = {**os.environ, "PYTHONUNBUFFERED": "1", "PATH": os.pathsep.join([here, os.environ.get("PATH", "")])}
    # Its own session: a terminal's Ctrl-C (SIGINT to the command's whole group) reaches this process alone, which
    # asks the pipeline to stop (end_child). Sent to both, it caught a pipeline still starting its interpreter and
    # printed that interpreter's traceback. A command killed outright still stops it (stop_with_parent).
    process = subprocess.Popen(command, cwd=request.base, stdout=sys.stderr, env=environment, start_new_session=True)
    try:
        return process.wait()
    finally:
        end_child(process)  # interrupted: doit is asked to stop as this process was, so it ends what it started


def _sweep(progress: Progress) -> None:
    """What a killed run left on this machine's engine (its lease is dead) goes before this run starts."""
    with default_backend() as backend:
        report = backend.sweep()
    if report.removed:
        progress(f"removed {report.removed} containers and networks a stopped run left behind")


def _doit_db(project: Project) -> Path:
    named = os.environ.get("STELE_BENCH_DOIT_DB")
    return Path(named) if named else project.doit_db


def export_published(store: Store, ref: str, target: Path, key: Ed25519PrivateKey | None = None) -> Path:
    """Replace ``target`` with the published tree (the old bundle goes only once the new one is whole), and write
    every superseded version beside it (:func:`export_versions`). With ``key``, each bundle written is signed."""
    tree = store.get_ref(ref)
    if tree is None:
        raise StageError(f"the pipeline finished without publishing: the store has no ref {ref}")
    staging = target.with_name(target.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    export_tree(store, tree, staging)
    if key is not None:
        sign(staging, key)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    export_versions(store, ref, target, key)
    return target


def publish_verified(
    store: Store, ref: str, target: Path, key: Ed25519PrivateKey, public: PublicKey
) -> tuple[Path, Verification]:
    """The bundle verified where it is when it already is the ref's tree (:mod:`.bundle_in_place`), else exported,
    signed and verified."""
    tree = store.get_ref(ref)
    trust = Trust(keys=(public,))
    if tree is not None and manifest_in_place(store, tree, target):
        verification = verify(target / MANIFEST_NAME, STAGES, trust)
        if verification.verified:
            export_versions(store, ref, target, key)
            return target, verification
    published = export_published(store, ref, target, key)
    return published, verify(published / MANIFEST_NAME, STAGES, trust)


def project_key(project: Project, progress: Progress) -> tuple[Ed25519PrivateKey, PublicKey]:
    """The project's publisher key, made on first use: the demo's bundles are signed like any other."""
    path = project.signing_key
    if not path.exists():
        _, public, keyid = generate_key(path)
        progress(f"made the project's signing key {path} (key id {keyid[:16]}); readers verify with {public}")
    return load_private_key(path), load_public_key(public_key_path(path))


def run_suite(request: SuiteRequest, progress: Progress) -> SuiteRunResult:
    parse_executor(request.executor).check_reachable()  # refused before any image is built
    with run_lease(request.project, f"stele-bench {request.command}", request.wait, progress):
        return _run_suite(request, progress)


def _run_stages(
    progress: Progress, request: SuiteRequest, variables: dict[str, str], plan: Plan, store: Store
) -> float:
    """Run the plan's stages in the pipeline process, or, when every one is cached and every ref in place, only say so
    (doit would do nothing, and starting it costs seconds); the time they started, which later records are from."""
    started = time.time()
    cached = _all_cached(plan, runtime(store.location), store)
    if cached is None:
        _run_doit(request, variables, request.debug)
    else:
        _say_cached(progress, cached, store, started)
    return started


def _run_suite(request: SuiteRequest, progress: Progress) -> SuiteRunResult:
    suite = _preflight(request)
    suite_id = suite.manifest.suite_id
    store = Store(request.store)
    _images(progress, suite, request, store if request.executor != "local" else None)
    variables = _variables(request, store)
    with contextlib.chdir(request.base):  # the plan the pipeline process will build, checked here first
        _, plan = plan_variables(variables)
    private, public = project_key(request.project, progress)  # made (and said) before the stages, read or refused
    if request.executor == "local":  # a cluster's nodes each sweep before an invocation (the runtime's recover)
        _sweep(progress)
    started = _run_stages(progress, request, variables, plan, store)
    executed = [store.get_document(result.key, ActionKey).stage for result in recorded_from(store, started)]
    target = request.published or request.project.published(suite_id)
    published, verification = publish_verified(store, f"published/{suite_id}", target, private, public)
    tree = store.get_ref(f"published/{suite_id}")
    assert tree is not None  # export_published refused otherwise
    record = RunRecord(
        suite_id=suite_id,
        plan=f"suite={variables['suite']}",
        attempts=request.attempts,
        started=started,
        ended=time.time(),
        executed=len(executed),
        stages=tuple(sorted(set(executed))),
        published=TreeDigest(tree),
        verified=verification.verified,
    )
    run_ref = record_run(store, record)
    return SuiteRunResult(suite_id, store.location, run_ref, tuple(executed), published, verification)
