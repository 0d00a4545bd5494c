"""`stele-bench image build NAME` (prints the image ID to pin), `stele-bench image ls` and `stele-bench image scan
IMAGE` (the harness's name anywhere in an image's filesystem; exit 1 when found)."""

from __future__ import annotations

import argparse

from ..images import ImageName, build_image, list_images, scan_image
from .locate import open_store
from .output import Output

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("image")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    build = verbs.add_parser("build", help="build an image unless one with the same inputs exists; prints its ID")
    build.add_argument(
        "name",
        type=ImageName,
        choices=[n for n in ImageName if n is not ImageName.LAYER],
        metavar="NAME",
        help="tiny, base or agent",
    )
    build.add_argument(
        "--archive",
        action="store_true",
        help="also keep the image's archive in the store (--store), so every node of a cluster loads this image",
    )
    build.set_defaults(handler=_build)
    verbs.add_parser("ls", help="list built images, newest first per recipe").set_defaults(handler=_ls)
    scan = verbs.add_parser(
        "scan", help="search an image's whole filesystem for the harness's name (exit 1 when it is found)"
    )
    scan.add_argument("image", metavar="IMAGE", help="an image ID or tag in the local engine")
    scan.set_defaults(handler=_scan)


def _build(args: argparse.Namespace, out: Output) -> int:
    out.progress(f"building the {args.name.value} image (reused when its inputs are unchanged)")
    result = build_image(args.name, store=open_store(args, create=True) if args.archive else None)
    record = result.record
    data = {
        "name": record.name.value,
        "image_id": record.image_id,
        "inputs": record.inputs,
        "built": result.built,
        "seconds": round(result.seconds, 3),
        "size": record.size,
        "archive": result.archive,
    }
    out.progress(f"{'built' if result.built else 'reused'} in {result.seconds:.1f}s")
    out.result(data, record.image_id)
    return 0


def _ls(args: argparse.Namespace, out: Output) -> int:
    records = list_images()
    rows = [
        {"name": r.name.value, "image_id": r.image_id, "inputs": r.inputs, "size": r.size, "created": r.created}
        for r in records
    ]
    text = "\n".join(f"{r['name']:<6} {r['image_id']}  {int(r['size']) / 1e6:8.1f} MB  {r['created']}" for r in rows)
    out.result({"images": rows}, text or "no images built; run `stele-bench image build tiny|base|agent`")
    return 0


def _scan(args: argparse.Namespace, out: Output) -> int:
    out.progress(f"scanning the filesystem of {args.image}")
    scan = scan_image(args.image)
    data = {
        "image": args.image,
        "entries": scan.entries,
        "files": scan.files,
        "bytes": scan.bytes,
        "seconds": round(scan.seconds, 3),
        "clean": not scan.findings,
        "findings": [{"path": f.path, "line": f.line, "term": f.term} for f in scan.findings],
    }
    summary = f"{args.image}: {scan.files} files, {scan.bytes / 1e6:.1f} MB in {scan.seconds:.1f}s: "
    summary += f"{len(scan.findings)} finding(s)" if scan.findings else "clean"
    out.result(data, "\n".join([summary, *(str(finding) for finding in scan.findings)]))
    return 1 if scan.findings else 0
