"""The `stele-bench` command line: one module per command group, each with a ``register`` function.

``--json``, ``--store``, ``--project`` and ``--debug`` are accepted before the command and after it, for every
command; the store is found from the project (:mod:`bench.cli.locate`). With
``--json`` a command prints exactly one JSON object on stdout: its result, or ``{"error": {...}}`` when it is
refused (a usage mistake included). Every refusal is one line on stderr with a non-zero exit; an exception that
is not a refusal is a bug, reported in one line that points at ``--debug`` (which shows the traceback). SIGTERM
and SIGHUP stop a command the way Ctrl-C does, ending every child it started (:mod:`bench.stop_signals`).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

from .. import __version__
from ..errors import EXIT_CODES, BenchError, StoreError, SystemRefused, UsageError
from ..stop_signals import Interrupted, stop_signals
from .commands import CommandTable
from .output import Output

__all__ = ["ENVIRONMENT", "build_parser", "main"]

EXIT_INTERRUPTED = 130  # SIGINT; a stop signal exits 128 + its number (SIGTERM: 143)
EXIT_INTERNAL = 70  # EX_SOFTWARE: an exception that is not a refusal, so a bug
_DEBUG_HINT = "rerun with --debug for the traceback"
_EXIT_CONTRACT = 6  # ContractError's: a pydantic error that escaped its reader is still a contract refusal

DESCRIPTION = """\
Paired benchmarks of coding-agent memory systems: each task runs twice, with and without the memory, in
containers that differ only in that; both arms are graded alike and the results published with a manifest anyone
can re-verify. Start with `stele-bench demo`, or `stele-bench init` and `stele-bench new suite` for your own.

The store, doit's database and published bundles live in the project (the nearest directory holding
stele-bench.toml, found from the working directory upward, as git does)."""


def location_argument(text: str) -> str:
    """``--store``: a directory or an S3 URL, spelled the same for every process that opens it."""
    from ..store.location import store_location  # the store package, only when a command names a store

    try:
        return store_location(text)
    except BenchError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class _VersionRequested(Exception):
    """``--version`` was given: print it in the asked-for form instead of argparse's own exit."""


class _Version(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit", default=argparse.SUPPRESS)

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option: str | None = None) -> None:
        raise _VersionRequested


class _Parser(argparse.ArgumentParser):
    """A parser whose mistakes are refusals like any other (argparse would print usage prose and exit)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, hint=f"see `{self.prog} --help`")


def _common_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """The options every command takes. Below the top they default to SUPPRESS, so a value given before the
    command is kept unless it is given again after it."""
    keep: dict[str, Any] = {} if top else {"default": argparse.SUPPRESS}
    parser.add_argument(
        "--store",
        type=location_argument,
        metavar="DIR|s3://BUCKET/PREFIX",
        help="object store: a directory or an S3 bucket (default: $STELE_BENCH_STORE, else the project's store/)",
        **keep,
    )
    parser.add_argument(
        "--project",
        type=Path,
        metavar="DIR",
        help="the project directory (default: $STELE_BENCH_PROJECT, else the nearest directory at or above "
        "the working directory holding stele-bench.toml)",
        **keep,
    )
    parser.add_argument(
        "--sandbox",
        metavar="NAME",
        help="the sandbox backend containers run on: docker or process (default: $STELE_BENCH_SANDBOX, else the "
        "project's [sandbox] backend in stele-bench.toml, else docker)",
        **keep,
    )
    parser.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout", **keep)
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error", **keep)


def _prepare_command(parser: argparse.ArgumentParser) -> None:
    """A command's parser as its module made it, given the common options at every level below the top."""
    for child in (parser, *_subparsers(parser)):
        _common_options(child, top=False)


def _subparsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """Every parser below ``parser``: commands, their verbs, and so on."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):  # aliases map to the same parser
                yield child
                yield from _subparsers(child)


# Every environment variable stele-bench reads (README.md's table says the same; a test keeps them in step).
ENVIRONMENT: dict[str, str] = {
    "STELE_BENCH_PROJECT": "the project directory, instead of finding it from the working directory",
    "STELE_BENCH_STORE": "the store (a directory or s3://BUCKET/PREFIX), instead of the project's store/",
    "STELE_BENCH_STORE_CACHE": "an S3 store's local cache (default ~/.cache/stele-bench/store; off: none)",
    "AWS_ENDPOINT_URL_S3": "an S3 store's endpoint (credentials: the usual AWS variables, read by boto3)",
    "AWS_ENDPOINT_URL": "an S3 store's endpoint when AWS_ENDPOINT_URL_S3 is unset",
    "AWS_REGION": "an S3 store's region (default us-east-1)",
    "AWS_DEFAULT_REGION": "an S3 store's region when AWS_REGION is unset",
    "STELE_BENCH_EXECUTOR": "where invocations run, instead of local: ray://HEAD:PORT",
    "STELE_BENCH_SANDBOX": "the sandbox backend containers run on: docker (default) or process; over the "
    "project's [sandbox] backend",
    "STELE_BENCH_ROOT": "where a cluster node runs invocations from (default: the checkout stele-bench is in)",
    "STELE_BENCH_DOIT_DB": "doit's dependency database, instead of the project's .doit.sqlite",
    "STELE_BENCH_CACHE": "where image builds keep rootfs tarballs and CLI downloads (default ~/.cache/stele-bench)",
    "XDG_CACHE_HOME": "the cache root when STELE_BENCH_CACHE is unset",
    "STELE_BENCH_EMBEDDING_MODEL_DIR": "the all-MiniLM-L6-v2 weights for the memory's semantic probe",
    "STELE_BENCH_UNCHECKED_CORPUS_ALLOWED": "1 lets `certify` run without a source tree, saying so in its report",
    "RECALL_HOME": "where the bundled reference memory's provisioner keeps per-run state (default <temp>/recall)",
    "RECALL_VECTORS": "where it keeps passage vectors between restores (default <temp>/recall-vectors.sqlite)",
    "SANDBOX_LEASE_DIR": "where runners keep the lease files `sandbox sweep` reads (default: the temp directory)",
    "PATH": "where a provisioner declared as a command is found (the running Python's directory is put first)",
    "NO_COLOR": "any value turns colour off in progress lines",
    "TERM": "dumb turns colour off in progress lines",
}


def _epilog() -> str:
    codes = "\n".join(f"  {code:>3}  {meaning}" for code, meaning in EXIT_CODES.items())
    names = "\n".join(f"  {name:<38} {meaning}" for name, meaning in ENVIRONMENT.items())
    keys = "  and the provider key a gateway or fence config names (never stored, logged or published)"
    return f"exit codes:\n{codes}\n\nenvironment variables:\n{names}\n{keys}"


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree; a command's module is imported when the command is parsed or looked up
    (:mod:`bench.cli.commands`), so walking the tree loads all of them."""
    parser = _Parser(
        prog="stele-bench",
        description=DESCRIPTION,
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version)
    _common_options(parser, top=True)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", action=CommandTable)
    assert isinstance(commands, CommandTable)
    commands.prepare = _prepare_command
    return parser


def _flag(arguments: Sequence[str], flag: str) -> bool:
    """Whether ``flag`` was given, read before parsing so that a usage error is reported in the asked-for form."""
    words = list(arguments)
    return flag in (words[: words.index("--")] if "--" in words else words)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    out = Output(as_json=_flag(arguments, "--json"))
    debug = _flag(arguments, "--debug")
    args: argparse.Namespace | None = None
    with stop_signals():
        try:
            args = build_parser().parse_args(arguments)
            out.as_json, debug = args.json, args.debug  # as parsed: argparse also takes `--js` for `--json`
            if args.sandbox:
                _choose_sandbox(args.sandbox)
            code: int = args.handler(args, out)
            return code
        except _VersionRequested:
            out.result({"version": __version__}, f"stele-bench {__version__}")
            return 0
        except Interrupted as stop:
            return _interrupted(out, stop.signal_name, stop.exit_code)
        except KeyboardInterrupt:
            return _interrupted(out, "SIGINT", EXIT_INTERRUPTED)
        except BenchError as exc:
            _traceback(debug)
            return _refused(out, exc, args)
        except Exception as exc:  # every library error should have been translated; this is the net below
            _traceback(debug)
            return _unexpected(out, exc, debug)


def _choose_sandbox(name: str) -> None:
    """Refuse an unknown backend now, and name the chosen one in the environment every worker process inherits."""
    from ..sandbox.backends.choice import SANDBOX_VARIABLE, backend_factory  # only a command given --sandbox pays

    backend_factory(name)
    os.environ[SANDBOX_VARIABLE] = name


def _refused(out: Output, exc: BenchError, args: argparse.Namespace | None) -> int:
    """A refusal in one line; a store's refusal names the store it is about (the message may not know it)."""
    from .locate import store_path_or_none  # only a refusal pays for the store package

    error, text = exc.as_json(), f"error: {exc}"
    where = store_path_or_none(args) if isinstance(exc, StoreError) and args is not None else None
    if where is not None:
        error["store"] = str(where)
        if str(where) not in text:
            text += f" (store {where})"
    return out.error(error, text, exc.exit_code)


def _interrupted(out: Output, signal_name: str, code: int) -> int:
    message = f"interrupted by {signal_name}"
    error = {"code": "interrupted", "type": "Interrupted", "message": message, "signal": signal_name}
    return out.error({**error, "exit_code": code}, message, code)


def _traceback(debug: bool) -> None:
    if debug:
        traceback.print_exc(file=sys.stderr)


def _unexpected(out: Output, exc: Exception, debug: bool) -> int:
    """One line for an exception no boundary translated: what it was, and how to see more."""
    from pydantic import ValidationError  # only an unexpected error pays for pydantic here

    from ..contracts.files import validation_summary

    hint = "" if debug else f"; {_DEBUG_HINT}"
    if isinstance(exc, ValidationError):  # a contract checked outside its reader: still a contract refusal
        message = f"{exc.title} breaks its contract: {validation_summary(exc)}"
        error = {"code": "contract", "type": "ValidationError", "message": message, "exit_code": _EXIT_CONTRACT}
        return out.error(error, f"error: {message}{hint}", _EXIT_CONTRACT)
    if isinstance(exc, OSError):  # the machine refused (permissions, a full disk): say which file
        refusal = SystemRefused.of(exc)
        return out.error(refusal.as_json(), f"error: {refusal}", refusal.exit_code)
    first = str(exc).splitlines()[0][:300] if str(exc) else ""
    message = f"internal error: {type(exc).__name__}{': ' + first if first else ''}"
    error = {"code": "internal", "type": type(exc).__name__, "message": message, "exit_code": EXIT_INTERNAL}
    return out.error({**error, "hint": _DEBUG_HINT}, f"{message}{hint}", EXIT_INTERNAL)
