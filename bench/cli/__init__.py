"""The `stele-bench` command line: one module per command group, each with a ``register`` function.

Every command takes ``--json`` and then prints exactly one JSON object on stdout; errors go to stderr with a
non-zero exit.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from ..errors import BenchError
from ..store.location import store_location
from .output import Output

__all__ = ["main"]

# Each module defines `register(subparsers)`; order is the order of `--help`.
COMMAND_MODULES: tuple[str, ...] = (
    "bench.cli.demo_cmd",
    "bench.cli.prereg_cmd",
    "bench.cli.store_cmd",
    "bench.cli.lineage_cmd",
    "bench.cli.schema_cmd",
    "bench.cli.packaging_cmd",
    "bench.cli.certify_cmd",
    "bench.cli.provision_cmd",
    "bench.cli.image_cmd",
    "bench.cli.sandbox_cmd",
    "bench.cli.calibrate_cmd",
    "bench.cli.fence_cmd",
    "bench.cli.publish_cmd",
    "bench.cli.gateway_cmd",
)


def location_argument(text: str) -> str:
    """``--store``: a directory or an S3 URL, spelled the same for every process that opens it."""
    try:
        return store_location(text)
    except BenchError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="stele-bench", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--store",
        type=location_argument,
        default=os.environ.get("STELE_BENCH_STORE", "store"),
        help="object store: a directory or s3://BUCKET/PREFIX (default: $STELE_BENCH_STORE or ./store)",
    )
    parser.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    out = Output(as_json=args.json)
    try:
        code: int = args.handler(args, out)
    except BenchError as exc:
        return out.error(exc, exc.exit_code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return code
