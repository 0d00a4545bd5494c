"""The `stele-bench` command line: one module per command group, each with a ``register`` function.

``--json``, ``--store`` and ``--debug`` are accepted before the command and after it, for every command. With
``--json`` a command prints exactly one JSON object on stdout: its result, or ``{"error": {...}}`` when it is
refused (a usage mistake included). Every refusal is one line on stderr with a non-zero exit; an exception that
is not a refusal is a bug, reported in one line that points at ``--debug`` (which shows the traceback). SIGTERM
and SIGHUP stop a command the way Ctrl-C does, ending every child it started (:mod:`bench.cli.signals`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

from pydantic import ValidationError

from ..contracts.files import validation_summary
from ..errors import BenchError, UsageError
from ..store.location import store_location
from .output import Output
from .signals import Interrupted, stop_signals

__all__ = ["main"]

EXIT_INTERRUPTED = 130  # SIGINT; a stop signal exits 128 + its number (SIGTERM: 143)
EXIT_INTERNAL = 70  # EX_SOFTWARE: an exception that is not a refusal, so a bug
_DEBUG_HINT = "rerun with --debug for the traceback"

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


class _Parser(argparse.ArgumentParser):
    """A parser whose mistakes are refusals like any other (argparse would print usage prose and exit)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, hint=f"see `{self.prog} --help`")


def _common_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """The options every command takes. Below the top they default to SUPPRESS, so a value given before the
    command is kept unless it is given again after it."""
    keep: dict[str, Any] = {} if top else {"default": argparse.SUPPRESS}
    store_default = os.environ.get("STELE_BENCH_STORE", "store")  # a string default goes through `type` too
    parser.add_argument(
        "--store",
        type=location_argument,
        help="object store: a directory or s3://BUCKET/PREFIX (default: $STELE_BENCH_STORE or ./store)",
        **({"default": store_default} if top else keep),
    )
    parser.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout", **keep)
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error", **keep)


def _subparsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """Every parser below ``parser``: commands, their verbs, and so on."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):  # aliases map to the same parser
                yield child
                yield from _subparsers(child)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="stele-bench", description=__doc__.splitlines()[0])
    _common_options(parser, top=True)
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    for child in _subparsers(parser):
        _common_options(child, top=False)
    return parser


def _flag(arguments: Sequence[str], flag: str) -> bool:
    """Whether ``flag`` was given, read before parsing so that a usage error is reported in the asked-for form."""
    words = list(arguments)
    return flag in (words[: words.index("--")] if "--" in words else words)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    out = Output(as_json=_flag(arguments, "--json"))
    debug = _flag(arguments, "--debug")
    with stop_signals():
        try:
            args = build_parser().parse_args(arguments)
            out.as_json, debug = args.json, args.debug  # as parsed: argparse also takes `--js` for `--json`
            code: int = args.handler(args, out)
            return code
        except Interrupted as stop:
            return _interrupted(out, stop.signal_name, stop.exit_code)
        except KeyboardInterrupt:
            return _interrupted(out, "SIGINT", EXIT_INTERRUPTED)
        except BenchError as exc:
            _traceback(debug)
            return out.error(exc.as_json(), f"error: {exc}", exc.exit_code)
        except Exception as exc:  # every library error should have been translated; this is the net below
            _traceback(debug)
            return _unexpected(out, exc, debug)


def _interrupted(out: Output, signal_name: str, code: int) -> int:
    message = f"interrupted by {signal_name}"
    error = {"code": "interrupted", "type": "Interrupted", "message": message, "signal": signal_name}
    return out.error({**error, "exit_code": code}, message, code)


def _traceback(debug: bool) -> None:
    if debug:
        traceback.print_exc(file=sys.stderr)


def _unexpected(out: Output, exc: Exception, debug: bool) -> int:
    """One line for an exception no boundary translated: what it was, and how to see more."""
    hint = "" if debug else f"; {_DEBUG_HINT}"
    if isinstance(exc, ValidationError):  # a contract checked outside its reader: still a contract refusal
        message = f"{exc.title} breaks its contract: {validation_summary(exc)}"
        error = {"code": "contract", "type": "ValidationError", "message": message, "exit_code": 2}
        return out.error(error, f"error: {message}{hint}", 2)
    if isinstance(exc, OSError):  # the machine refused (permissions, a full disk): say which file
        where = f" ({exc.filename})" if exc.filename else ""
        message = f"{exc.strerror or exc}{where}"
        error = {"code": "os", "type": type(exc).__name__, "message": message, "exit_code": 1}
        return out.error(error, f"error: {message}{hint}", 1)
    first = str(exc).splitlines()[0][:300] if str(exc) else ""
    message = f"internal error: {type(exc).__name__}{': ' + first if first else ''}"
    error = {"code": "internal", "type": type(exc).__name__, "message": message, "exit_code": EXIT_INTERNAL}
    return out.error({**error, "hint": _DEBUG_HINT}, f"{message}{hint}", EXIT_INTERNAL)
