"""`stele-bench demo`: the bundled example suite through the real pipeline, then the published bundle verified.

The example ships with stele-bench (the repository's ``challenges/example``, or its copy in an installed wheel);
the store, doit's database and the published bundle are the project's, so running the demo again from anywhere in
the project re-runs nothing.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..project import example_root
from .locate import project_of
from .output import Output
from .suite_options import add_run_options, run_and_report, suite_request

__all__ = ["register"]

EXAMPLE_SUITE = Path("challenges/example")
NEXT = (
    "open the report in a browser; `stele-bench ls attempts` lists every attempt, `stele-bench lineage "
    "published/example` shows how the bundle was made, `stele-bench new suite` starts your own"
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "demo",
        description="Run the bundled example suite (four challenges, the suite's real agent CLI against a policy "
        "model, the reference memory) through every stage, publish the bundle into the project and verify it. "
        "A second run executes no stage.",
    )
    add_run_options(parser)
    parser.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace, out: Output) -> int:
    request = suite_request(args, project_of(args), example_root(), EXAMPLE_SUITE)
    return run_and_report(out, request, NEXT)
