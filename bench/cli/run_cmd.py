"""`stele-bench run SUITE_DIR`: a suite of the project's through the same pipeline as the demo.

The suite must lie inside the project: the plan keeps its paths relative to the project root, so action keys and
receipts hold no host path, and the preregistrations are the project's (``manifests/<suite>``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .locate import project_of
from .output import Output
from .suite_options import add_run_options, run_and_report, suite_request

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "run",
        description="Run SUITE_DIR's challenges through every stage, as the demo runs the example: live "
        "progress on stderr, the headline at the end, the bundle exported into the project and verified.",
    )
    parser.add_argument("suite", type=Path, metavar="SUITE_DIR", help="a suite directory inside the project")
    add_run_options(parser)
    parser.add_argument(
        "--memory",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this declared memory system (repeat for several; default: every one the suite declares)",
    )
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace, out: Output) -> int:
    project = project_of(args)
    request = suite_request(args, project, project.root, project.relative(args.suite), tuple(args.memory))
    suite = request.suite.as_posix()
    return run_and_report(
        out, request, f"open the report in a browser; `stele-bench status {suite}` says what is stale"
    )
