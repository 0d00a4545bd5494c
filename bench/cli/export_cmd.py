"""`stele-bench export inspect [BUNDLE] [--log-dir DIR]`: a published bundle as an Inspect AI log for `inspect view`."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..interop import write_inspect_log
from ..publish.bundle_layout import bundle_files
from ..results import tree_files
from ..store.lookup import resolve_digest
from .locate import open_store
from .output import Output

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("export")
    formats = parser.add_subparsers(dest="format", required=True, metavar="FORMAT")
    inspect = formats.add_parser(
        "inspect",
        help="an Inspect AI evaluation log: one sample per arm, with its transcript and scores",
        description="Write the bundle as an Inspect AI log (JSON, format 2) into a log directory, named as Inspect "
        "names its own logs (<ISO timestamp>_<suite>_<id>.json), the suite as its task: one sample per graded arm "
        "with its transcript as messages and the verifier, delivered and used scores. A bundle directory needs "
        "nothing else (no store, no project). `inspect view --log-dir DIR` lists and shows it.",
    )
    inspect.add_argument(
        "bundle",
        nargs="?",
        default="published/example",
        help="a bundle directory (a copy anywhere will do), or a ref, digest or unique prefix of a published tree "
        "in the store (default: published/example)",
    )
    inspect.add_argument(
        "--log-dir", type=Path, default=Path("logs"), metavar="DIR", help="where to write the log (default: logs)"
    )
    inspect.set_defaults(handler=_inspect)


def _inspect(args: argparse.Namespace, out: Output) -> int:
    directory = Path(args.bundle)
    data: dict[str, object] = {}
    if directory.is_dir():  # the bundle alone: its objects and lineage hold every arm
        files = bundle_files(directory)
    else:
        store = open_store(args, create=False)
        files = tree_files(store, resolve_digest(store, args.bundle))
        data["store"] = store.location
    log, count = write_inspect_log(files, args.log_dir)
    data |= {"log": str(log), "samples": count}
    view = f"inspect view --log-dir {args.log_dir}"
    out.result(data, f"wrote {count} samples to {log}; view them with `{view}`")
    return 0
