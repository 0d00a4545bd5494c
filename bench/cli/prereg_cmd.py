"""`stele-bench prereg freeze|correct|supersede`: the only ways a preregistration is written.

- ``freeze SUITE``: version 1 of every challenge that has none, before any run;
- ``correct SUITE CHALLENGE --reason WHY``: version N+1 from what the suite holds now, naming what moved;
- ``supersede SUITE CHALLENGE --published DIR``: the record excluding every run of a published bundle made under
  the replaced version (``superseded-v<N>.json``), kept whole.

Each writes a new file next to the others and never overwrites one.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..analysis.prereg import UndeliveredRule, load_preregistrations
from ..publish.bundle_layout import bundle_files, check_layout, load_records
from ..run.prereg_freeze import BudgetChoice, correction_moves, freeze, record_correction, record_supersession
from ..suite.suite import open_suite
from .locate import project_of
from .numbers import confidence, whole_number
from .output import Output

__all__ = ["register"]

_MOST_ATTEMPTS = 1000  # paid pairs per challenge; the stated power is computed exactly for this many
_MOST_WALL_SECONDS = 30 * 86400


def _budget_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--into",
        type=Path,
        metavar="DIR",
        help="where preregistrations go, as DIR/<suite id>/<challenge>/v<N>.json (default: the project's manifests/, "
        "which is where `run` reads them)",
    )
    parser.add_argument(
        "--attempts", type=whole_number(1, _MOST_ATTEMPTS), help="the most attempts a run may make (default 5)"
    )
    parser.add_argument("--max-tokens-per-arm", type=whole_number(1), help="token cap of each arm (default 2,000,000)")
    parser.add_argument(
        "--max-wall-seconds-per-arm",
        type=whole_number(1, _MOST_WALL_SECONDS),
        help="wall-time cap of each arm (default: the timeout)",
    )
    parser.add_argument("--confidence", type=confidence, help="the analysis's confidence level, e.g. 0.95")
    parser.add_argument(
        "--undelivered",
        choices=[rule.value for rule in UndeliveredRule],
        help="what a treatment that delivered nothing means (default: include for low-memory controls, else exclude)",
    )


def _challenge_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("suite", type=Path, help="a suite directory, e.g. challenges/example")
    parser.add_argument("challenge", help="the challenge id")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("prereg")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    freeze_parser = verbs.add_parser("freeze", help="write v1 for each challenge that has no preregistration yet")
    freeze_parser.add_argument("suite", type=Path, help="a suite directory, e.g. challenges/example")
    _budget_options(freeze_parser)
    freeze_parser.set_defaults(handler=_freeze)
    correct_parser = verbs.add_parser("correct", help="write version N+1 of a challenge from what the suite holds now")
    _challenge_arguments(correct_parser)
    correct_parser.add_argument("--reason", required=True, help="why the apparatus was corrected (recorded)")
    _budget_options(correct_parser)
    correct_parser.set_defaults(handler=_correct)
    supersede_parser = verbs.add_parser("supersede", help="record the exclusion of every run under a replaced version")
    _challenge_arguments(supersede_parser)
    supersede_parser.add_argument("--published", type=Path, required=True, help="a published bundle directory")
    supersede_parser.add_argument(
        "--version", type=whole_number(1), help="the replaced version (default: the one before the newest)"
    )
    supersede_parser.add_argument(
        "--into",
        type=Path,
        metavar="DIR",
        help="where preregistrations go, as DIR/<suite id>/<challenge>/v<N>.json (default: the project's manifests/, "
        "which is where `run` reads them)",
    )
    supersede_parser.set_defaults(handler=_supersede)


def _choice(args: argparse.Namespace) -> BudgetChoice:
    return BudgetChoice(
        attempts=args.attempts,
        max_tokens_per_arm=args.max_tokens_per_arm,
        max_wall_seconds_per_arm=args.max_wall_seconds_per_arm,
        confidence=args.confidence,
        undelivered=UndeliveredRule(args.undelivered) if args.undelivered else None,
    )


def _freeze(args: argparse.Namespace, out: Output) -> int:
    suite = open_suite(args.suite)
    written = freeze(suite, _into(args) / suite.manifest.suite_id, _choice(args))
    text = "\n".join(f"froze {path}" for path in written) or "every challenge already has a preregistration"
    out.result({"written": [str(path) for path in written]}, text)
    return 0


def _correct(args: argparse.Namespace, out: Output) -> int:
    suite = open_suite(args.suite)
    directory = _into(args) / suite.manifest.suite_id
    loaded = suite.challenge(args.challenge)
    path, old, corrected = record_correction(suite, loaded, directory, args.reason, _choice(args))
    moved = correction_moves(old, corrected)
    text = f"wrote {path}: v{corrected.version} supersedes v{corrected.version - 1}; moved: {', '.join(moved)}"
    out.result({"written": str(path), "version": corrected.version, "moved": moved}, text)
    return 0


def _supersede(args: argparse.Namespace, out: Output) -> int:
    suite = open_suite(args.suite)
    directory = _into(args) / suite.manifest.suite_id
    loaded = suite.challenge(args.challenge)
    files = bundle_files(args.published)
    check_layout(files, str(args.published))
    records = {digest: record for digest, (_, record) in load_records(files).items()}
    versions = load_preregistrations(directory).get(args.challenge, []) if directory.is_dir() else []
    version = args.version or (versions[-1].version - 1 if versions else 0)
    path = record_supersession(loaded, directory, version, records)
    out.result({"written": str(path), "version": version}, f"wrote {path}")
    return 0


def _into(args: argparse.Namespace) -> Path:
    return Path(args.into) if args.into is not None else project_of(args).manifests
