"""`stele-bench new suite DIR --repo PATH --commit SHA` and `stele-bench pin SUITE_DIR`: writing a suite."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..scaffold import new_suite, pin_suite
from .output import Output

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("new")
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND")
    suite = kinds.add_parser(
        "suite",
        help="write a suite skeleton: manifest, project bundle, fixture, a challenge, a provisioner template",
        description="Write a suite skeleton into DIR: the project's commit as a git bundle, a fixture, one "
        "challenge whose verifier and oracle are templates (`run` refuses the suite until they are written), a "
        "policy, a template provisioner and a README saying what to write in which order.",
    )
    suite.add_argument("directory", type=Path, metavar="DIR", help="a new directory; its name is the suite id")
    suite.add_argument("--repo", type=Path, required=True, metavar="PATH", help="a git repository or bundle")
    suite.add_argument("--commit", required=True, metavar="SHA", help="a full commit id, or a ref to resolve")
    suite.add_argument(
        "--name", help="the project's name in receipts (default: the repository directory's name, lowercased)"
    )
    suite.set_defaults(handler=_new_suite)
    pin = subparsers.add_parser("pin")
    pin.add_argument("suite", type=Path, metavar="SUITE_DIR", help="the suite directory")
    pin.add_argument("--check", action="store_true", help="change nothing; exit 1 when a pin is stale")
    pin.set_defaults(handler=_pin)


def _new_suite(args: argparse.Namespace, out: Output) -> int:
    written = new_suite(args.directory, args.repo, args.commit, args.name)
    data = {"suite": str(args.directory), "files": [str(path) for path in written]}
    lines = [f"wrote {len(written)} files into {args.directory}:", *(f"  {path}" for path in written)]
    lines.append(f"next: read {args.directory / 'README.md'}; write the verifier and oracle, then pin and freeze")
    out.result(data, "\n".join(lines))
    return 0


def _pin(args: argparse.Namespace, out: Output) -> int:
    changed = pin_suite(args.suite, write=not args.check)
    data = {"changed": [str(pin) for pin in changed], "written": bool(changed) and not args.check}
    verb = "stale" if args.check else "re-pinned"
    text = "\n".join(f"{verb}: {pin}" for pin in changed) or "every pin matches its file"
    out.result(data, text)
    return 1 if changed and args.check else 0
