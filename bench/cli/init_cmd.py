"""`stele-bench init [DIR]`: make a project, the directory every other command finds its store from."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..project import init_project
from .output import Output

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "init",
        description="Make a stele-bench project: commands run anywhere inside it use its store, doit database "
        "and published bundles. Nothing is overwritten; an existing project is left as it is.",
    )
    parser.add_argument("directory", nargs="?", type=Path, default=Path("."), metavar="DIR", help="default: here")
    parser.set_defaults(handler=_init)


def _init(args: argparse.Namespace, out: Output) -> int:
    project, made = init_project(args.directory)
    data = {"project": str(project.root), "created": made, "store": str(project.store)}
    verb = "made a stele-bench project in" if made else "already a stele-bench project:"
    lines = [
        f"{verb} {project.root}",
        "next: `stele-bench demo` runs the bundled example here; "
        "`stele-bench new suite suites/NAME --repo PATH --commit SHA` starts a suite of your own",
    ]
    out.result(data, "\n".join(lines))
    return 0
