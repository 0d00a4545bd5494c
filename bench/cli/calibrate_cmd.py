"""`stele-bench calibrate CHALLENGE_DIR`: the verifier fails untouched and passes with the oracle applied."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..contracts import ImageId, TreeDigest
from ..errors import SandboxError
from ..images import ImageName, newest_image_id, require_image
from ..sandbox import default_backend
from ..stages.calibrate import DEFAULT_REPEATS, require_calibrated, run_calibration
from ..store import tree_from_directory
from ..suite.challenge import load_challenge
from .digest_arguments import digest_argument, resolve_digest
from .locate import open_store
from .numbers import whole_number
from .output import Output

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("calibrate")
    parser.add_argument("challenge", type=Path, help="challenge directory holding challenge.json and its assets")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--tree", type=digest_argument, help="the redacted workspace tree (a digest, a unique prefix or a ref)"
    )
    source.add_argument("--workspace", type=Path, help="a directory to hash into the store as the redacted tree")
    parser.add_argument("--image", help="image ID to run in (default: the newest base image)")
    parser.add_argument(
        "--repeats",
        type=whole_number(1, 50),
        default=DEFAULT_REPEATS,
        help=f"verifier runs per tree (default {DEFAULT_REPEATS})",
    )
    parser.set_defaults(handler=_calibrate)


def _calibrate(args: argparse.Namespace, out: Output) -> int:
    store = open_store(args, create=True)
    manifest = load_challenge(args.challenge)
    with default_backend(store) as backend:
        image_id = require_image(args.image, backend) if args.image else newest_image_id(ImageName.BASE, backend)
        redacted = (
            TreeDigest(resolve_digest(store, args.tree))
            if args.tree is not None
            else tree_from_directory(store, args.workspace)
        )
        out.progress(f"calibrating {manifest.challenge_id} in {image_id[:19]}")
        done = run_calibration(backend, store, args.challenge, manifest, ImageId(image_id), redacted, args.repeats)
    report, digest = done.report, store.put_document(done.report)
    data = {**report.model_dump(mode="json"), "report": str(digest), "runs": str(store.put_document(done.runs))}
    oracle = "not run" if report.oracle is None else " ".join(o.value for o in report.oracle.outcomes)
    lines = [
        f"untouched: verifier {' '.join(o.value for o in report.untouched.outcomes)}",
        f"oracle:    verifier {oracle}",
        f"verdict:   {report.verdict.value} (report {digest}){': ' + report.reason if report.reason else ''}",
    ]
    out.result(data, "\n".join(lines))
    try:
        require_calibrated(report)
    except SandboxError as refused:  # the check ran and answered no: exit 1, as a rejected certification does
        return out.error({**refused.as_json(), "exit_code": 1}, f"error: {refused}", 1)
    return 0
