"""`stele-bench status [SUITE_DIR]`: what a run of the suite would execute, and why, before it spends anything.

The plan is built as `run` builds it (which stores the suite's sources, as any run does), then each invocation is
checked against the action cache without running anything (:mod:`bench.pipeline.status`).
"""

from __future__ import annotations

import argparse
import contextlib
from collections import Counter
from pathlib import Path

from ..pipeline.progress import TaskView
from ..pipeline.status import Freshness, plan_status
from ..project import example_root
from ..run.dodo import plan_variables
from .locate import open_store, project_of, store_runtime
from .output import Output
from .suite_options import positive_int

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("status")
    parser.add_argument(
        "suite",
        nargs="?",
        type=Path,
        metavar="SUITE_DIR",
        help="a suite directory inside the project (default: the bundled example the demo runs)",
    )
    parser.add_argument("--attempts", type=positive_int, metavar="N", help="as `run --attempts` (default: the suite's)")
    parser.add_argument(
        "--all",
        action="store_true",
        help="list every stage, the up to date and the waiting ones too (default: the stale)",
    )
    parser.set_defaults(handler=_status)


def _status(args: argparse.Namespace, out: Output) -> int:
    project = project_of(args)
    store = open_store(args, create=False)
    if args.suite is None:
        base, suite = example_root(), Path("challenges/example")
    else:
        base, suite = project.root, project.relative(args.suite)
    variables = {"suite": suite.as_posix(), "store": store.location}
    if args.attempts is not None:
        variables["attempts"] = str(args.attempts)
    with contextlib.chdir(base):  # the plan's paths start there, as in the pipeline process
        _, plan = plan_variables(variables)
    statuses = plan_status(plan, store_runtime(args, create=False))
    counts = Counter(status.freshness for status in statuses)
    shown = [status for status in statuses if args.all or status.freshness is Freshness.STALE]
    lines = [
        f"{suite.as_posix()} in store {store.location}: {counts[Freshness.UP_TO_DATE]} up to date, "
        f"{counts[Freshness.STALE]} stale, {counts[Freshness.WAITING]} waiting on those"
    ]
    for status in shown:
        title = TaskView(status.name, status.stage, status.labels, "").title()
        lines.append(f"  {status.freshness.value:<10} {title}: {'; '.join(status.reasons)}".rstrip(": "))
    if counts[Freshness.STALE]:
        lines.append(f"next: `stele-bench {'demo' if args.suite is None else 'run ' + suite.as_posix()}` runs them")
    data = {
        "suite": suite.as_posix(),
        "store": store.location,
        "counts": {freshness.value: counts[freshness] for freshness in Freshness},
        "invocations": [status.as_json() for status in shown],
    }
    out.result(data, "\n".join(lines))
    return 0
