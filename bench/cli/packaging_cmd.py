"""`stele-bench corpus REPO COMMIT` and `stele-bench redact TREE`: the packaging stages, run through the engine."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..builder.execution import ActionOutcome, execute
from ..contracts import PortablePath
from ..packaging import MaterializationReceipt, RedactionReceipt, RedactParams, corpus_params
from ..provision.fixture import load_fixture
from ..stages.corpus import corpus
from ..stages.redact import redact
from .digest_arguments import digest_argument, resolve_digest
from .locate import store_runtime
from .output import Output

__all__ = ["outcome_fields", "register"]


def outcome_fields(outcome: ActionOutcome) -> dict[str, Any]:
    return {"ran": outcome.executed, "action": outcome.key, "outputs": dict(outcome.outputs)}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("corpus")
    parser.add_argument("repository", help="a git repository directory or a git bundle file")
    parser.add_argument("commit", help="a full 40-hex commit id, or a ref (resolved and recorded)")
    parser.add_argument(
        "--name",
        help="the repository's portable name in the receipt and the cache key (default: a directory's own name, "
        "or a bundle's digest); never its path, so two checkouts of one commit are one cache hit",
    )
    parser.set_defaults(handler=_corpus)
    parser = subparsers.add_parser("redact")
    parser.add_argument(
        "tree", type=digest_argument, help="the tree to redact: a digest, a unique prefix of one, or a ref name"
    )
    parser.add_argument("--fixture", type=Path, help="a fixture root whose redact_paths are removed too")
    parser.add_argument(
        "--remove", action="append", default=[], type=_portable, metavar="PATH", help="an extra path to remove"
    )
    parser.set_defaults(handler=_redact)


def _portable(text: str) -> PortablePath:
    try:
        return PortablePath(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _corpus(args: argparse.Namespace, out: Output) -> int:
    context = store_runtime(args, create=True).context()
    store = context.store
    outcome = execute(context, corpus, {}, corpus_params(args.repository, args.commit, args.name))
    receipt = store.get_document(outcome.outputs["receipt"], MaterializationReceipt)
    data = outcome_fields(outcome) | {"receipt": receipt.model_dump(mode="json")}
    lines = [
        f"{'ran' if outcome.executed else 'cached'}: corpus of {receipt.repository} at {receipt.commit}",
        f"tree {receipt.tree}",
        f"{receipt.files} files, {receipt.symlinks} symlinks, {receipt.total_bytes} bytes",
        f"git tree {receipt.git_tree}",
        *(f"lfs pointer: {p.path} (oid {p.oid}, {p.size} bytes not packaged)" for p in receipt.lfs_pointers),
        f"receipt {outcome.outputs['receipt']}",
    ]
    out.result(data, "\n".join(lines))
    return 0


def _redact(args: argparse.Namespace, out: Output) -> int:
    context = store_runtime(args, create=True).context()
    store = context.store
    extra = list(args.remove)
    if args.fixture is not None:
        extra += load_fixture(args.fixture).redact_paths
    params = RedactParams(extra_paths=tuple(sorted(set(extra))))
    outcome = execute(context, redact, {"tree": resolve_digest(store, args.tree)}, params)
    receipt = store.get_document(outcome.outputs["receipt"], RedactionReceipt)
    data = outcome_fields(outcome) | {"receipt": receipt.model_dump(mode="json")}
    lines = [f"{'ran' if outcome.executed else 'cached'}: redacted {receipt.source}", f"tree {receipt.redacted}"]
    lines += [f"removed {r.path} ({r.kind.value}, {r.size} bytes, {r.digest}): {r.reason}" for r in receipt.removed]
    lines.append(f"receipt {outcome.outputs['receipt']}")
    out.result(data, "\n".join(lines))
    return 0
