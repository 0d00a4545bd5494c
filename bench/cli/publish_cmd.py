"""`stele-bench publish BUNDLE [--check]` and `stele-bench verify MANIFEST`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..publish import MANIFEST_NAME, ClaimKind, Verification, check_bundle, verify
from ..run.catalogue import STAGES
from ..run.publish import publish_directory
from .numbers import confidence
from .output import Output

__all__ = ["register", "verification_json", "verification_lines", "verify_bundle"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "publish", help="derive the summary and report of a bundle, run the publication checks, write its manifest"
    )
    parser.add_argument("bundle", type=Path, help="bundle directory (records/, admissions/, manifests/)")
    parser.add_argument(
        "--confidence", type=confidence, default="0.95", help="confidence level of every interval (default 0.95)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help=f"only run the publication checks on an already published bundle's {MANIFEST_NAME}",
    )
    parser.set_defaults(handler=_publish)
    check = subparsers.add_parser(
        "verify", help="re-hash every file of a published bundle and re-run its deterministic stages from it"
    )
    check.add_argument("manifest", type=Path, help=f"the bundle's {MANIFEST_NAME}")
    check.set_defaults(handler=_verify)


def _publish(args: argparse.Namespace, out: Output) -> int:
    if args.check:
        findings = check_bundle(args.bundle / MANIFEST_NAME)
        lines = [str(f) for f in findings] or ["publication checks passed"]
        out.result({"passed": not findings, "findings": [str(f) for f in findings]}, "\n".join(lines))
        return 1 if findings else 0
    manifest = publish_directory(args.bundle, args.confidence)
    text = f"published {len(manifest.files)} files: {args.bundle / MANIFEST_NAME}"
    out.result({"manifest": str(args.bundle / MANIFEST_NAME), "files": len(manifest.files)}, text)
    return 0


def verify_bundle(manifest: Path) -> Verification:
    """``verify`` with the stages this release declares: what the commands and the demo run."""
    return verify(manifest, STAGES)


def verification_json(verification: Verification) -> dict[str, Any]:
    return {
        "verified": verification.verified,
        "claims": {kind.value: counts for kind, counts in verification.counts().items()},
        "differences": [
            {"path": d.path, "recorded": d.recorded, "actual": d.actual, "how": d.how, "lineage": list(d.lineage)}
            for d in verification.differences
        ],
    }


def verification_lines(verification: Verification) -> list[str]:
    """Each claim kind with its stages, then ``verified`` or every difference."""
    lines = []
    for kind, counts in verification.counts().items():
        stages = ", ".join(f"{stage} {count}" for stage, count in sorted(counts.items())) or "none"
        how = "re-run from the bundle" if kind is ClaimKind.REDERIVED else "observed or tree-reading, by digest"
        lines.append(f"{kind.value} ({how}): {stages}")
    if verification.verified:
        return [*lines, "verified"]
    return [*lines, "NOT verified:", *(f"  {difference}" for difference in verification.differences)]


def _verify(args: argparse.Namespace, out: Output) -> int:
    verification = verify_bundle(args.manifest)
    out.result(verification_json(verification), "\n".join(verification_lines(verification)))
    return 0 if verification.verified else 1
