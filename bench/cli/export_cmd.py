"""`stele-bench export inspect BUNDLE -o FILE`: a published bundle as an Inspect AI log for `inspect view`."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..interop import write_inspect_log
from ..publish.bundle import bundle_files
from ..results import tree_files
from ..store.lookup import resolve_digest
from .locate import open_store
from .output import Output

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("export", help="write a published bundle in another tool's format")
    formats = parser.add_subparsers(dest="format", required=True, metavar="FORMAT")
    inspect = formats.add_parser(
        "inspect",
        help="an Inspect AI evaluation log: one sample per arm, with its transcript and scores",
        description="Write the bundle as an Inspect AI log (JSON, format 2): one sample per graded arm with its "
        "transcript as messages and the verifier, delivered and used scores. `inspect view --log-dir DIR` shows it.",
    )
    inspect.add_argument(
        "bundle",
        nargs="?",
        default="published/example",
        help="a bundle directory, or a ref, digest or unique prefix of a published tree in the store "
        "(default: published/example)",
    )
    inspect.add_argument(
        "--output", "-o", type=Path, required=True, metavar="FILE", help="the log file to write (name it *.json)"
    )
    inspect.set_defaults(handler=_inspect)


def _inspect(args: argparse.Namespace, out: Output) -> int:
    store = open_store(args, create=False)  # transcripts and arm records live in the store, not in the bundle
    directory = Path(args.bundle)
    if directory.is_dir():
        files, task = bundle_files(directory), directory.resolve().name
    else:
        tree = resolve_digest(store, args.bundle)
        files, task = tree_files(store, tree), args.bundle.rsplit("/", 1)[-1]
    count = write_inspect_log(store, files, task, args.output)
    data = {"log": str(args.output), "samples": count, "store": store.location}
    view = f"inspect view --log-dir {args.output.parent}"
    out.result(data, f"wrote {count} samples to {args.output}; view them with `{view}`")
    return 0
