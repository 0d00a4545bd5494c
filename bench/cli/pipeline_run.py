"""`demo` and `run` alike: check the suite, build the images, run its plan through doit, export and verify.

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

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..analysis.prereg import load_preregistrations
from ..contracts import TreeDigest, canonical_bytes
from ..errors import ContractError, StageError, UsageError
from ..images import ImageName, build_image
from ..images.build import build_layer
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
from ..publish.verification import Trust
from ..results import load_bundle
from ..run.dodo import plan_variables
from ..run.narrate import SuiteNarrator
from ..run.run_record import RunRecord, record_run
from ..run_lease import run_lease
from ..sandbox import default_backend
from ..scaffold.unwritten import refuse_unwritten
from ..stop_signals import STOP_SIGNALS, Interrupted, end_child
from ..store import Store, export_tree
from ..store.actions import ActionKey, recorded_from
from ..store.versions import version_index
from ..suite.suite import Suite, open_suite
from .locate import open_store, store_runtime
from .output import Output
from .publish_cmd import verification_json, verification_lines, verify_bundle

__all__ = ["SuiteRequest", "add_run_options", "export_published", "positive_int", "run_suite"]


@dataclass(frozen=True)
class SuiteRequest:
    """One suite run: the suite (relative to ``base``, where the plan's paths start) and how to run it."""

    project: Project
    base: Path
    suite: Path
    attempts: int | None
    memory: tuple[str, ...]
    jobs: int
    published: Path | None  # where the bundle is exported; None: the project's published/<suite>
    executor: str = "local"  # where invocations run (bench.pipeline.executor_choice.parse_executor)
    wait: bool = True  # for another run of the project to finish (False: refuse, naming it)


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1 (0 and -1 are mistakes, never "the default")."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--attempts",
        type=positive_int,
        metavar="N",
        help="attempts per challenge, from 1 to the most its preregistration froze (default: the suite's own)",
    )
    parser.add_argument(
        "--jobs",
        "-j",
        "--workers",
        dest="jobs",
        type=positive_int,
        default=1,
        metavar="N",
        help="stages run at once (default 1: both arms of a pair already share the machine's cores)",
    )
    parser.add_argument(
        "--published",
        type=Path,
        metavar="DIR",
        help="where the published bundle is exported (default: the project's published/<suite>)",
    )
    parser.add_argument(
        "--executor",
        default=os.environ.get("STELE_BENCH_EXECUTOR", "local"),
        metavar="WHERE",
        help="where invocations run: local (default, or $STELE_BENCH_EXECUTOR) or ray://HEAD:PORT, a Ray cluster "
        "over a store every node opens (--store s3://...); the images are then archived into the store",
    )
    parser.add_argument(
        "--no-wait",
        dest="wait",
        action="store_false",
        help="when another run holds the project, refuse (naming it) instead of waiting for it to finish",
    )


def _preflight(request: SuiteRequest) -> Suite:
    """Everything that can be refused without a container: the suite, its templates, its preregistrations."""
    suite = open_suite(request.base / request.suite)
    refuse_unwritten(suite, request.suite)
    manifest = suite.manifest
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
    return variables


def _verb(built: bool) -> str:
    return "built" if built else "reused"


def _images(out: Output, suite: Suite, memory: tuple[str, ...], archive: Store | None) -> None:
    """The images the plan pins, built (or found) here so that the wait is announced before the stages start;
    with ``archive`` (a cluster run) the agent image and the layers are kept in the store for every node."""
    for name in (ImageName.BASE, ImageName.AGENT):
        out.progress(f"image {name.value}: building unless built (the first build takes a few minutes)")
        result = build_image(name, store=archive if name is ImageName.AGENT else None)
        out.progress(f"image {name.value}: {result.record.image_id[:19]} ({_verb(result.built)})")
    for system in suite.manifest.memory_systems:
        if system.attachment.image is not None and (not memory or system.name in memory):
            out.progress(f"image layer of {system.name}: building unless built")
            layer = build_layer(system.attachment.image, store=archive)
            out.progress(f"image layer of {system.name}: {layer.record.image_id[:19]} ({_verb(layer.built)})")


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


def _say_cached(out: Output, statuses: list[InvocationStatus], store: Store, started: float) -> None:
    """What doit's reporter says of a run whose every stage is cached: the tally, then the headline."""
    views = [
        TaskView(
            status.name, status.stage, status.labels, store.location, {k: str(v) for k, v in status.outputs.items()}
        )
        for status in statuses
    ]
    took = elapsed(time.time() - started)
    out.progress(f"{len(views)} stages in {took}: 0 ran, {len(views)} cached, 0 failed")
    for line in SuiteNarrator().finale(views):
        out.progress(line)


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
    process = subprocess.Popen(command, cwd=request.base, stdout=sys.stderr, env=environment)
    try:
        return process.wait()
    finally:
        end_child(process)  # interrupted: doit is asked to stop as this process was, so it ends what it started


def _sweep(out: Output) -> None:
    """What a killed run left on this machine's engine (its lease is dead) goes before this run starts."""
    with default_backend() as backend:
        report = backend.sweep()
    if report.removed:
        out.progress(f"removed {report.removed} containers and networks a stopped run left behind")


def _doit_db(project: Project) -> Path:
    named = os.environ.get("STELE_BENCH_DOIT_DB")
    return Path(named) if named else project.doit_db


def export_published(store: Store, ref: str, target: Path, key: Ed25519PrivateKey | None = None) -> Path:
    """Replace ``target`` with the published tree (the old bundle goes only once the new one is whole), and write
    every superseded version beside it, ``<target>-versions/v<N>/``, with ``index.json`` listing them all: a
    re-grade never reinterprets a published bundle, it adds one. With ``key``, each bundle written is signed."""
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
    index = version_index(store, ref)
    kept = target.with_name(target.name + "-versions")
    for version in index.versions:
        if version.superseded and not (kept / f"v{version.version}").is_dir():
            export_tree(store, version.digest, kept / f"v{version.version}")
            if key is not None:
                sign(kept / f"v{version.version}", key)
    kept.mkdir(parents=True, exist_ok=True)
    (kept / "index.json").write_bytes(canonical_bytes(index))
    return target


def project_key(project: Project, out: Output) -> tuple[Ed25519PrivateKey, PublicKey]:
    """The project's publisher key, made on first use: the demo's bundles are signed like any other."""
    path = project.signing_key
    if not path.exists():
        _, public, keyid = generate_key(path)
        out.progress(f"made the project's signing key {path} (key id {keyid[:16]}); readers verify with {public}")
    return load_private_key(path), load_public_key(public_key_path(path))


def run_suite(args: argparse.Namespace, out: Output, request: SuiteRequest, next_step: str) -> int:
    parse_executor(request.executor).check_reachable()  # refused before any image is built
    with run_lease(request.project, f"stele-bench {args.command}", request.wait, out.progress):
        return _run_suite(args, out, request, next_step)


def _run_stages(
    args: argparse.Namespace, out: Output, request: SuiteRequest, variables: dict[str, str], plan: Plan, store: Store
) -> float:
    """Run the plan's stages in the pipeline process, or, when every one is cached and every ref in place, only say so
    (doit would do nothing, and starting it costs seconds); the time they started, which later records are from."""
    started = time.time()
    cached = _all_cached(plan, store_runtime(args, create=True), store)
    if cached is None:
        _run_doit(request, variables, args.debug)
    else:
        _say_cached(out, cached, store, started)
    return started


def _run_suite(args: argparse.Namespace, out: Output, request: SuiteRequest, next_step: str) -> int:
    suite = _preflight(request)
    suite_id = suite.manifest.suite_id
    store = open_store(args, create=True)
    _images(out, suite, request.memory, store if request.executor != "local" else None)
    variables = _variables(request, store)
    with contextlib.chdir(request.base):  # the plan the pipeline process will build, checked here first
        _, plan = plan_variables(variables)
    private, public = project_key(request.project, out)  # made (and said) before the stages, read or refused
    if request.executor == "local":  # a cluster's nodes each sweep before an invocation (the runtime's recover)
        _sweep(out)
    started = _run_stages(args, out, request, variables, plan, store)
    executed = [store.get_document(result.key, ActionKey).stage for result in recorded_from(store, started)]
    target = request.published or request.project.published(suite_id)
    published = export_published(store, f"published/{suite_id}", target, private)
    verification = verify_bundle(published / MANIFEST_NAME, Trust(keys=(public,)))
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
    data: dict[str, Any] = {
        "project": str(request.project.root),
        "store": store.location,
        "suite": suite_id,
        "run": run_ref,
        "executed_stages": len(executed),
        "stages": sorted(set(executed)),
        "published": str(published),
        "report": str(published / "report" / "index.html"),
        **verification_json(verification),
        "headline": load_bundle(published).headline.as_json(),
        "next": next_step,
    }
    ran = f"executed {len(executed)} stages" if executed else "nothing to do: every stage was cached; executed 0 stages"
    lines = [f"{ran} (store {store.location})", f"report: {data['report']}"]
    lines += verification_lines(verification)
    lines.append(f"next: {next_step}")
    out.result(data, "\n".join(lines))
    return 0 if verification.verified else 1
