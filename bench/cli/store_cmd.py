"""`stele-bench store fsck|gc|cat|ls|put|export`."""

from __future__ import annotations

import argparse
import base64
import sys
from pathlib import Path
from typing import Any

from ..contracts import Digest
from ..errors import ContractError, StoreCorrupt
from ..store import Store, export_tree, tree_from_directory
from ..store.fsck import FsckStatus, fsck
from ..store.gc import DEFAULT_GRACE_SECONDS, gc
from .output import Output

__all__ = ["parse_digest", "register"]


def parse_digest(text: str) -> Digest:
    try:
        return Digest(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("store", help="inspect and maintain the object store")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    verbs.add_parser("fsck", help="re-hash every object; exit 3 corrupt, 4 missing, 5 both").set_defaults(handler=_fsck)
    collect = verbs.add_parser("gc", help="delete what no ref reaches, past a grace period")
    collect.add_argument("--grace-seconds", type=float, default=DEFAULT_GRACE_SECONDS)
    collect.set_defaults(handler=_gc)
    cat = verbs.add_parser("cat", help="print an object's bytes")
    cat.add_argument("digest", type=parse_digest)
    cat.set_defaults(handler=_cat)
    listing = verbs.add_parser("ls", help="list refs (and with --all, every object)")
    listing.add_argument("--all", action="store_true", help="also list every object: digest, document or blob")
    listing.set_defaults(handler=_ls)
    put = verbs.add_parser("put", help="store a file's bytes, or a directory as a tree")
    put.add_argument("path", type=Path)
    put.add_argument("--ref", help="also point this ref at the result")
    put.set_defaults(handler=_put)
    export = verbs.add_parser("export", help="write a tree into a new directory")
    export.add_argument("digest", type=parse_digest)
    export.add_argument("destination", type=Path)
    export.set_defaults(handler=_export)


def _fsck(args: argparse.Namespace, out: Output) -> int:
    try:
        report = fsck(Store(args.store))
    except StoreCorrupt as exc:  # the index itself is damaged: fsck's answer is "corrupt", with the reason
        out.result({"status": "corrupt", "index": exc.path, "problem": exc.message}, str(exc))
        return int(FsckStatus.CORRUPT)
    data: dict[str, Any] = {
        "status": report.status.name.lower(),
        "objects": report.objects,
        "corrupt": sorted(report.corrupt),
        "missing": {str(k): v for k, v in sorted(report.missing.items())},
        "stale_temporaries": report.stale_temporaries,
    }
    lines = [f"{report.objects} objects checked: {data['status']}"]
    lines += [f"corrupt {digest}" for digest in data["corrupt"]]
    lines += [f"missing {digest} (referred to by {', '.join(refs)})" for digest, refs in data["missing"].items()]
    out.result(data, "\n".join(lines))
    return int(report.status)


def _gc(args: argparse.Namespace, out: Output) -> int:
    report = gc(Store(args.store), args.grace_seconds)
    data = {
        "kept": report.kept,
        "deleted": report.deleted,
        "freed_bytes": report.freed_bytes,
        "temporaries_removed": report.temporaries_removed,
    }
    out.result(data, f"deleted {report.deleted} objects ({report.freed_bytes} bytes), kept {report.kept}")
    return 0


def _cat(args: argparse.Namespace, out: Output) -> int:
    data = Store(args.store).get_bytes(args.digest)
    if out.as_json:
        try:
            out.result({"digest": args.digest, "text": data.decode("utf-8")})
        except UnicodeDecodeError:
            out.result({"digest": args.digest, "base64": base64.b64encode(data).decode()})
    else:
        sys.stdout.buffer.write(data)
    return 0


def _ls(args: argparse.Namespace, out: Output) -> int:
    store = Store(args.store)
    refs = store.refs()
    data: dict[str, Any] = {"refs": dict(refs)}
    lines = [f"{digest}  {name}" for name, digest in refs.items()]
    if args.all:
        objects = [(info.digest, "document" if info.is_document else "blob") for info in store.backend.objects()]
        data["objects"] = [{"digest": digest, "kind": kind} for digest, kind in objects]
        lines += [f"{digest}  ({kind})" for digest, kind in objects]
    out.result(data, "\n".join(lines))
    return 0


def _put(args: argparse.Namespace, out: Output) -> int:
    store = Store(args.store)
    digest: Digest
    if args.path.is_dir():
        digest = tree_from_directory(store, args.path)
    elif args.path.is_file():
        digest = store.put_bytes(args.path.read_bytes())
    else:
        raise ContractError(f"{args.path} is neither a file nor a directory")
    if args.ref:
        store.set_ref(args.ref, digest)
    out.result({"digest": digest}, digest)
    return 0


def _export(args: argparse.Namespace, out: Output) -> int:
    export_tree(Store(args.store), args.digest, args.destination)
    out.result({"exported": args.digest, "destination": str(args.destination)}, f"exported to {args.destination}")
    return 0
