"""`stele-bench lineage DIGEST [--format text|json|dot|mermaid]` and `stele-bench rederive DIGEST`."""

from __future__ import annotations

import argparse

from ..builder.lineage import RederiveVerdict, rederive
from ..builder.lineage_graph import lineage_graph
from ..run.catalogue import STAGES
from .digest_arguments import digest_argument, resolve_digest
from .lineage_formats import LineageFormat, render
from .locate import store_runtime
from .output import Output

__all__ = ["register"]

_DIGEST_HELP = "the object: a digest, a unique prefix of its hex (at least 4 digits) or a ref name"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("lineage")
    parser.add_argument("digest", type=digest_argument, help=_DIGEST_HELP)
    parser.add_argument(
        "--format",
        type=LineageFormat,
        choices=list(LineageFormat),
        default=LineageFormat.TEXT,
        metavar="FORMAT",
        help="text (the default; a shared object is printed once, then named '(above)'), json, dot (Graphviz) or "
        "mermaid",
    )
    parser.set_defaults(handler=_lineage)
    parser = subparsers.add_parser("rederive")
    parser.add_argument("digest", type=digest_argument, help=_DIGEST_HELP)
    parser.add_argument(
        "--locate",
        action="append",
        default=[],
        type=_located,
        metavar="FIELD=VALUE",
        help="where an outside input lies (e.g. source=PATH for a corpus): action keys leave locations out",
    )
    parser.set_defaults(handler=_rederive)


def _located(text: str) -> tuple[str, str]:
    field, equals, value = text.partition("=")
    if not (field and equals and value):
        raise argparse.ArgumentTypeError(f"expected FIELD=VALUE, such as source=../project, got {text!r}")
    return field, value


def _lineage(args: argparse.Namespace, out: Output) -> int:
    store = store_runtime(args, create=False).open_store()
    graph = lineage_graph(store, resolve_digest(store, args.digest))
    out.result(graph.as_json(), render(graph, args.format))
    return 0


def _rederive(args: argparse.Namespace, out: Output) -> int:
    context = store_runtime(args, create=False).context()
    result = rederive(context, STAGES, resolve_digest(context.store, args.digest), dict(args.locate))
    differing = {name: {"recorded": old, "derived": new} for name, (old, new) in result.differing.items()}
    data = {
        "verdict": result.verdict.value,
        "stage": result.stage,
        "differing": differing,
        "code_changed": result.code_changed,
    }
    if result.verdict is RederiveVerdict.SAME:
        text = "same"
    else:
        text = "\n".join(f"{name}: recorded {d['recorded']} derived {d['derived']}" for name, d in differing.items())
    if result.code_changed:
        text += "\n(note: the stage's code has changed since the action was recorded)"
    out.result(data, text)
    return 0 if result.verdict is RederiveVerdict.SAME else 1
