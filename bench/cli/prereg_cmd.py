"""`stele-bench prereg freeze SUITE`: write version 1 of each challenge's preregistration, before any run."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..run.prereg import freeze
from ..suite.suite import open_suite
from .locate import project_of
from .output import Output

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("prereg", help="preregister a suite's challenges")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    freeze_parser = verbs.add_parser("freeze", help="write v1 for each challenge that has no preregistration yet")
    freeze_parser.add_argument("suite", type=Path, help="a suite directory, e.g. challenges/example")
    freeze_parser.add_argument(
        "--into",
        type=Path,
        metavar="DIR",
        help="where preregistrations go, as DIR/<suite id>/<challenge>/v1.json (default: the project's manifests/, "
        "which is where `run` reads them)",
    )
    freeze_parser.set_defaults(handler=_freeze)


def _freeze(args: argparse.Namespace, out: Output) -> int:
    suite = open_suite(args.suite)
    written = freeze(suite, _into(args) / suite.manifest.suite_id)
    text = "\n".join(f"froze {path}" for path in written) or "every challenge already has a preregistration"
    out.result({"written": [str(path) for path in written]}, text)
    return 0


def _into(args: argparse.Namespace) -> Path:
    return Path(args.into) if args.into is not None else project_of(args).manifests
