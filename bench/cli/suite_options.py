"""What `demo` and `run` share on the command line: their options, and the suite run's result said as text or JSON.

The run itself is a library function (:func:`bench.run.runner.run_suite`); this module only parses and renders.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ..harness import HARNESS_NAMES
from ..project import Project
from ..results import load_bundle
from ..run.runner import SuiteRequest, run_suite
from .locate import store_path
from .output import Output
from .publish_cmd import verification_json, verification_lines

__all__ = ["add_run_options", "positive_int", "run_and_report", "suite_request"]


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
        "--harness",
        choices=HARNESS_NAMES,
        metavar="NAME",
        help=f"the coding agent every arm runs, one of {', '.join(HARNESS_NAMES)} (default: the suite's `harness`); "
        "the suite must declare a model for it",
    )
    parser.add_argument(
        "--no-wait",
        dest="wait",
        action="store_false",
        help="when another run holds the project, refuse (naming it) instead of waiting for it to finish",
    )


def suite_request(
    args: argparse.Namespace, project: Project, base: Path, suite: Path, memory: tuple[str, ...] = ()
) -> SuiteRequest:
    """The suite run ``args`` ask for (the options :func:`add_run_options` added): ``suite`` relative to ``base``."""
    return SuiteRequest(
        project=project,
        store=store_path(args),
        command=args.command,
        base=base,
        suite=suite,
        attempts=args.attempts,
        memory=memory,
        jobs=args.jobs,
        published=args.published,
        executor=args.executor,
        wait=args.wait,
        harness=args.harness,
        debug=args.debug,
    )


def run_and_report(out: Output, request: SuiteRequest, next_step: str) -> int:
    """Run the suite, then say what it did: 0 when the published bundle verified, 1 when it did not."""
    done = run_suite(request, out.progress)
    verification = done.verification
    data: dict[str, Any] = {
        "project": str(request.project.root),
        "store": done.store,
        "suite": done.suite_id,
        "run": done.run,
        "executed_stages": len(done.executed),
        "stages": sorted(set(done.executed)),
        "published": str(done.published),
        "report": str(done.published / "report" / "index.html"),
        **verification_json(verification),
        "headline": load_bundle(done.published).headline.as_json(),
        "next": next_step,
    }
    executed = len(done.executed)
    ran = f"executed {executed} stages" if executed else "nothing to do: every stage was cached; executed 0 stages"
    lines = [f"{ran} (store {done.store})", f"report: {data['report']}"]
    lines += verification_lines(verification)
    lines.append(f"next: {next_step}")
    out.result(data, "\n".join(lines))
    return 0 if verification.verified else 1
