"""`stele-bench demo`: the bundled example suite through the real pipeline, then the published bundle verified.

The pipeline is `dodo.py` with the example plan, run by doit from the project root over the store; what it
executed is read back from the store's action log, so a second demo can say truthfully that it ran nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ..errors import BenchError, StageError
from ..pipeline.executor import parse_executor
from ..publish.manifest import MANIFEST_NAME
from ..publish.verify import verify
from ..sandbox.images import ImageName, build_image, build_layer
from ..store import Store, export_tree
from ..store.actions import ActionKey, recorded_from
from ..suite.suite import load_suite
from .output import Output
from .signals import end_child

__all__ = ["register"]

ROOT = Path(__file__).resolve().parent.parent.parent
PLAN = Path("manifests/plans/example.json")
SUITE = Path("challenges/example")
PUBLISHED = Path("manifests/published/example")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("demo", help="run the bundled example suite end to end and verify its publication")
    parser.add_argument("--attempts", type=int, default=None, help="attempts per challenge (default: the suite's)")
    parser.add_argument("--workers", type=int, default=1, help="doit workers (default 1: arms share two cores)")
    parser.add_argument(
        "--executor",
        default=os.environ.get("STELE_BENCH_EXECUTOR", "local"),
        help="where invocations run: local (default, or $STELE_BENCH_EXECUTOR) or ray://HEAD:PORT, a Ray cluster "
        "over a store every node opens (--store s3://...); the images are then archived into the store",
    )
    parser.add_argument(
        "--published", type=Path, default=ROOT / PUBLISHED, help=f"where the bundle is exported (default {PUBLISHED})"
    )
    parser.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace, out: Output) -> int:
    store_path: str = args.store
    parse_executor(args.executor)  # a misspelled executor is refused before any image is built
    # On a cluster each node loads the pinned images from their archives in the store: the same IDs everywhere.
    archive = Store(store_path) if args.executor != "local" else None
    for name in (ImageName.BASE, ImageName.AGENT):
        out.progress(f"demo: image {name.value}: building unless built (the first build takes a few minutes)")
        result = build_image(name, store=archive if name is ImageName.AGENT else None)
        verb = "built" if result.built else "reused"
        out.progress(f"demo: image {name.value}: {result.record.image_id[:19]} ({verb})")
    for system in load_suite(ROOT / SUITE).memory_systems:
        if system.attachment.image is not None:  # the plan pins it; built here so the wait is announced
            out.progress(f"demo: image layer of {system.name}: building unless built")
            layer = build_layer(system.attachment.image, store=archive)
            verb = "built" if layer.built else "reused"
            out.progress(f"demo: image layer of {system.name}: {layer.record.image_id[:19]} ({verb})")
    started = time.time()
    _run_doit(store_path, args.attempts, args.workers, args.executor)
    store = Store(store_path)
    executed = [store.get_document(result.key, ActionKey).stage for result in recorded_from(store, started)]
    published = _export_published(store, args.published)
    differences = verify(published / MANIFEST_NAME)
    data = {
        "executed_stages": len(executed),
        "stages": sorted(set(executed)),
        "published": str(published),
        "report": str(published / "report" / "index.html"),
        "verified": not differences,
        "differences": [str(difference) for difference in differences],
    }
    ran = f"executed {len(executed)} stages" if executed else "nothing to do: every stage was cached; executed 0 stages"
    lines = [ran, f"report: {data['report']}", "verified" if not differences else "NOT verified:"]
    lines += [f"  {difference}" for difference in differences]
    out.result(data, "\n".join(lines))
    return 0 if not differences else 1


def _run_doit(store: str, attempts: int | None, workers: int, executor: str) -> None:
    """doit from the project root, its output on stderr so that stdout stays the command's result."""
    command = [sys.executable, "-m", "doit", "-n", str(workers), f"plan={PLAN}", f"store={store}"]
    if attempts is not None:
        command.append(f"attempts={attempts}")
    if executor != "local":  # doit's workers only wait on the cluster: threads, sharing one Ray connection
        command += ["-P", "thread", f"executor={executor}"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=sys.stderr, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        code = process.wait()
    finally:
        end_child(process)  # interrupted: doit is asked to stop as this process was, so it ends what it started
    if code != 0:
        raise StageError(f"the pipeline stopped (doit exit {code}); the log above names the failing task")


def _export_published(store: Store, target: Path) -> Path:
    """Replace ``target`` with the published tree the store's ref names; the old bundle goes only once the new
    one is whole."""
    tree = store.get_ref("published/example")
    if tree is None:
        raise BenchError("the pipeline finished without publishing; expected the ref published/example")
    staging = target.with_name(target.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    export_tree(store, tree, staging)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target
