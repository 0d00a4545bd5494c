"""`stele-bench publish BUNDLE [--check]` and `stele-bench verify MANIFEST`."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..publish import MANIFEST_NAME, check_bundle, publish, verify
from .output import Output

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "publish", help="derive the summary and report of a bundle, run the publication checks, write its manifest"
    )
    parser.add_argument("bundle", type=Path, help="bundle directory (records/, admissions/, manifests/)")
    parser.add_argument("--confidence", default="0.95", help="confidence level of every interval (default 0.95)")
    parser.add_argument(
        "--check",
        action="store_true",
        help=f"only run the publication checks on an already published bundle's {MANIFEST_NAME}",
    )
    parser.set_defaults(handler=_publish)
    check = subparsers.add_parser("verify", help="re-hash every file of a published bundle and re-derive its receipts")
    check.add_argument("manifest", type=Path, help=f"the bundle's {MANIFEST_NAME}")
    check.set_defaults(handler=_verify)


def _publish(args: argparse.Namespace, out: Output) -> int:
    if args.check:
        findings = check_bundle(args.bundle / MANIFEST_NAME)
        lines = [str(f) for f in findings] or ["publication checks passed"]
        out.result({"passed": not findings, "findings": [str(f) for f in findings]}, "\n".join(lines))
        return 1 if findings else 0
    manifest = publish(args.bundle, args.confidence)
    text = f"published {len(manifest.files)} files, {len(manifest.receipts)} receipts: {args.bundle / MANIFEST_NAME}"
    out.result({"manifest": str(args.bundle / MANIFEST_NAME), "files": len(manifest.files)}, text)
    return 0


def _verify(args: argparse.Namespace, out: Output) -> int:
    differences = verify(args.manifest)
    text = "\n".join(str(d) for d in differences) if differences else "verified"
    data = {
        "verified": not differences,
        "differences": [
            {"path": d.path, "recorded": d.recorded, "actual": d.actual, "how": d.how, "lineage": list(d.lineage)}
            for d in differences
        ],
    }
    out.result(data, text)
    return 1 if differences else 0
