"""`stele-bench sandbox sweep`: remove what dead runners left on the engine, never what a live one uses."""

from __future__ import annotations

import argparse

from ..sandbox import default_backend
from .output import Output

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("sandbox")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    sweep = verbs.add_parser(
        "sweep",
        help="remove the containers and networks of runners that died without cleaning up (their lease expired or "
        "their process is gone); a live run's, another worker's, are left alone",
    )
    sweep.set_defaults(handler=_sweep)


def _sweep(args: argparse.Namespace, out: Output) -> int:
    with default_backend() as backend:
        report = backend.sweep()
    data = {"removed": report.removed, "live": report.live, "foreign": report.foreign}
    text = (
        f"removed {report.removed} containers and networks of dead runners; left {report.live} of live runners "
        f"and {report.foreign} made under no lease this sweep can judge"
    )
    out.result(data, text)
    return 0
