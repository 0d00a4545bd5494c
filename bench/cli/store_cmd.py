"""`stele-bench store fsck|gc|cat|ls|put|export`: every answer names the store it is about.

Only ``put`` creates a store; the others refuse a directory that holds none rather than leave an empty one behind.
"""

from __future__ import annotations

import argparse
import base64
import sys
from pathlib import Path
from typing import Any

from ..contracts import Digest
from ..contracts.checked_files import read_bounded
from ..errors import SourceError, StoreCorrupt, UsageError
from ..store import Store, export_tree, tree_from_directory
from ..store.fsck import FsckStatus, fsck
from ..store.gc import DEFAULT_GRACE_SECONDS, gc
from ..store.location import store_location
from ..store.repair import DirectorySource, RepairSource, StoreSource, repair
from .digest_arguments import digest_argument, ref_argument, resolve_digest
from .locate import declare_contracts, holds_store, open_store, store_path
from .numbers import seconds
from .output import Output

__all__ = ["register"]

_MOST_GRACE_SECONDS = 10 * 365 * 86400.0
_PUT_LIMIT = 1 << 30  # a put holds the file in memory whole, as the store hashes and writes it
_DIGEST_HELP = "a digest, a unique prefix of its hex (at least 4 digits, as progress lines print) or a ref name"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("store")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    check = verbs.add_parser("fsck", help="re-hash every object; exit 3 corrupt, 4 missing, 5 both")
    check.add_argument(
        "--repair",
        action="store_true",
        help="put good bytes back from --from, forget what has none, and make the actions that produced it run "
        "again; exit 0 when every finding is healed or will be made again, else 4",
    )
    check.add_argument(
        "--from",
        dest="source",
        metavar="SOURCE",
        help="where good bytes may be found: a directory or a published bundle (its files are hashed), or "
        "another store (a store directory or s3://BUCKET/PREFIX)",
    )
    check.set_defaults(handler=_fsck)
    collect = verbs.add_parser("gc", help="delete what no ref reaches, past a grace period")
    collect.add_argument(
        "--grace-seconds",
        type=seconds(0, _MOST_GRACE_SECONDS),
        default=DEFAULT_GRACE_SECONDS,
        help=f"spare objects younger than this, which a running writer may be about to refer to "
        f"(default {DEFAULT_GRACE_SECONDS:g})",
    )
    collect.set_defaults(handler=_gc)
    cat = verbs.add_parser("cat", help="print an object's bytes")
    cat.add_argument("digest", type=digest_argument, help=_DIGEST_HELP)
    cat.set_defaults(handler=_cat)
    listing = verbs.add_parser("ls", help="list refs (and with --all, every object)")
    listing.add_argument("--all", action="store_true", help="also list every object: digest, document or blob")
    listing.set_defaults(handler=_ls)
    put = verbs.add_parser("put", help="store a file's bytes, or a directory as a tree")
    put.add_argument("path", type=Path, help="a file (stored as its bytes) or a directory (stored as a tree)")
    put.add_argument("--ref", type=ref_argument, help="also point this ref at the result")
    put.set_defaults(handler=_put)
    export = verbs.add_parser("export", help="write a tree into a new directory")
    export.add_argument("digest", type=digest_argument, help=f"the tree: {_DIGEST_HELP}")
    export.add_argument("destination", type=Path, help="a directory that does not exist yet, or an empty one")
    export.set_defaults(handler=_export)


def _fsck(args: argparse.Namespace, out: Output) -> int:
    if args.source is not None and not args.repair:
        raise UsageError("--from names where a repair takes good bytes from: add --repair", field="--from")
    where = store_path(args)
    declare_contracts()
    try:
        store = open_store(args, create=False)
        if args.repair:
            return _repair(store, args.source, out)
        report = fsck(store)
    except StoreCorrupt as exc:  # the index itself is damaged: fsck's answer is "corrupt", with the reason
        corrupt = {"store": str(where), "status": "corrupt", "index": exc.path, "problem": exc.message}
        out.result(corrupt, str(exc))
        return int(FsckStatus.CORRUPT)
    data: dict[str, Any] = {
        "store": store.location,
        "status": report.status.name.lower(),
        "objects": report.objects,
        "corrupt": sorted(report.corrupt),
        "missing": {str(k): v for k, v in sorted(report.missing.items())},
        "stale_temporaries": report.stale_temporaries,
    }
    lines = [f"{report.objects} objects checked in {store.location}: {data['status']}"]
    lines += [f"corrupt {digest}" for digest in data["corrupt"]]
    lines += [f"missing {digest} (referred to by {', '.join(refs)})" for digest, refs in data["missing"].items()]
    out.result(data, "\n".join(lines))
    return int(report.status)


def _source(named: str | None) -> RepairSource | None:
    """A store (``s3://`` or a store directory) or any other directory, whose files are hashed."""
    if named is None:
        return None
    if holds_store(named):
        return StoreSource(Store(store_location(named)))
    return DirectorySource(Path(named))


def _repair(store: Store, named: str | None, out: Output) -> int:
    source = _source(named)
    report = repair(store, source)
    found = report.before
    data: dict[str, Any] = {
        "store": store.location,
        "status": "repaired" if report.complete else "missing",
        "found": {"corrupt": sorted(found.corrupt), "missing": sorted(found.missing)},
        "source": source.name if source is not None else None,
        "healed": report.healed,
        "dropped": report.dropped,
        "run_again": [{"stage": f.stage, "action": f.key, "result": f.result} for f in report.forgotten],
        "unrepaired": report.unrepaired,
    }
    lines = [f"{found.objects} objects checked in {store.location}: {found.status.name.lower()}"]
    lines += [f"healed {digest} from {data['source']}" for digest in report.healed]
    lines += [f"forgot {digest}: no good copy (its index entry is dropped)" for digest in report.dropped]
    lines += [f"forgot the result of {f.stage} (action {f.key.short}): it runs again" for f in report.forgotten]
    lines += [
        f"still missing {digest}: no action makes it again; name a source holding it with --from"
        for digest in report.unrepaired
    ]
    if report.forgotten:
        lines.append("next: run the suite again (`stele-bench demo` or `stele-bench run SUITE`)")
    if not (found.corrupt or found.missing):
        lines.append("nothing to repair")
    out.result(data, "\n".join(lines))
    return 0 if report.complete else int(FsckStatus.MISSING)


def _gc(args: argparse.Namespace, out: Output) -> int:
    declare_contracts()
    store = open_store(args, create=False)
    report = gc(store, args.grace_seconds)
    data = {
        "store": store.location,
        "kept": report.kept,
        "deleted": report.deleted,
        "freed_bytes": report.freed_bytes,
        "temporaries_removed": report.temporaries_removed,
    }
    text = f"deleted {report.deleted} objects ({report.freed_bytes} bytes) from {store.location}, kept {report.kept}"
    out.result(data, text)
    return 0


def _cat(args: argparse.Namespace, out: Output) -> int:
    store = open_store(args, create=False)
    digest = resolve_digest(store, args.digest)
    data = store.get_bytes(digest)
    if out.as_json:
        try:
            out.result({"store": store.location, "digest": digest, "text": data.decode("utf-8")})
        except UnicodeDecodeError:
            out.result({"store": store.location, "digest": digest, "base64": base64.b64encode(data).decode()})
    else:
        sys.stdout.buffer.write(data)
    return 0


def _ls(args: argparse.Namespace, out: Output) -> int:
    store = open_store(args, create=False)
    refs = store.refs()
    data: dict[str, Any] = {"store": store.location, "refs": dict(refs)}
    lines = [f"store {store.location}: {len(refs)} refs"]
    lines += [f"{digest}  {name}" for name, digest in refs.items()]
    if args.all:
        objects = [(info.digest, "document" if info.is_document else "blob") for info in store.backend.objects()]
        data["objects"] = [{"digest": digest, "kind": kind} for digest, kind in objects]
        lines += [f"{digest}  ({kind})" for digest, kind in objects]
    out.result(data, "\n".join(lines))
    return 0


def _put(args: argparse.Namespace, out: Output) -> int:
    store = open_store(args, create=True)
    digest: Digest
    if args.path.is_dir():
        digest = tree_from_directory(store, args.path)
    else:  # a regular file: a FIFO, a device or a symlink loop is refused naming it
        digest = store.put_bytes(read_bounded(args.path, "the file to store", max_bytes=_PUT_LIMIT, error=SourceError))
    if args.ref:
        store.set_ref(args.ref, digest)
    out.progress(f"stored in {store.location}")
    out.result({"store": store.location, "digest": digest}, digest)
    return 0


def _export(args: argparse.Namespace, out: Output) -> int:
    store = open_store(args, create=False)
    digest = resolve_digest(store, args.digest)
    export_tree(store, digest, args.destination)
    data = {"store": store.location, "exported": digest, "destination": str(args.destination)}
    out.result(data, f"exported {digest.short} from {store.location} to {args.destination}")
    return 0
