"""`stele-bench sandbox sweep`: remove what a killed runner left on the engine."""

from __future__ import annotations

import argparse

from ..sandbox.docker_backend import DockerBackend
from ..store import Store
from .output import Output

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("sandbox", help="the runner's containers and networks on the engine")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    sweep = verbs.add_parser(
        "sweep",
        help="remove every container and network the runner made (after a SIGKILL skipped its cleanup); "
        "never while a run is going on, whose containers it would remove too",
    )
    sweep.set_defaults(handler=_sweep)


def _sweep(args: argparse.Namespace, out: Output) -> int:
    removed = DockerBackend(Store(args.store)).sweep()
    out.result({"removed": removed}, f"removed {removed} containers and networks")
    return 0
