"""`stele-bench calibrate CHALLENGE_DIR`: the verifier fails untouched and passes with the oracle applied."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..contracts import ImageId
from ..sandbox import calibrate, default_backend, require_calibrated
from ..sandbox.calibrate import DEFAULT_REPEATS
from ..sandbox.images import ImageName, newest_image_id, require_image
from ..store import Store, tree_from_directory
from ..suite.challenge import load_challenge
from .output import Output
from .store_cmd import parse_digest

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("calibrate", help="show a challenge's verifier fails untouched and passes solved")
    parser.add_argument("challenge", type=Path, help="challenge directory holding challenge.json and its assets")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--tree", type=parse_digest, help="the redacted workspace tree (a store digest)")
    source.add_argument("--workspace", type=Path, help="a directory to hash into the store as the redacted tree")
    parser.add_argument("--image", help="image ID to run in (default: the newest base image)")
    parser.add_argument(
        "--repeats", type=int, default=DEFAULT_REPEATS, help=f"verifier runs per tree (default {DEFAULT_REPEATS})"
    )
    parser.set_defaults(handler=_calibrate)


def _calibrate(args: argparse.Namespace, out: Output) -> int:
    store = Store(args.store)
    manifest = load_challenge(args.challenge)
    with default_backend(store) as backend:
        image_id = require_image(args.image, backend) if args.image else newest_image_id(ImageName.BASE, backend)
        redacted = args.tree if args.tree is not None else tree_from_directory(store, args.workspace)
        out.progress(f"calibrating {manifest.challenge_id} in {image_id[:19]}")
        report = calibrate(backend, store, args.challenge, manifest, ImageId(image_id), redacted, args.repeats)
    digest = store.put_document(report)
    data = {**report.model_dump(mode="json"), "report": str(digest)}
    oracle = "not run" if report.oracle is None else " ".join(o.value for o in report.oracle.outcomes)
    lines = [
        f"untouched: verifier {' '.join(o.value for o in report.untouched.outcomes)}",
        f"oracle:    verifier {oracle}",
        f"verdict:   {report.verdict.value} (report {digest}){': ' + report.reason if report.reason else ''}",
    ]
    out.result(data, "\n".join(lines))
    require_calibrated(report)
    return 0
