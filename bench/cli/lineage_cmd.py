"""`stele-bench lineage DIGEST` and `stele-bench rederive DIGEST`."""

from __future__ import annotations

import argparse

from ..run.catalogue import STAGES, runtime
from ..stages.lineage import RederiveVerdict, lineage, rederive
from .output import Output
from .store_cmd import parse_digest

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("lineage", help="the actions and inputs that produced an object, to its roots")
    parser.add_argument("digest", type=parse_digest)
    parser.set_defaults(handler=_lineage)
    parser = subparsers.add_parser("rederive", help="re-run the deterministic action that produced an object")
    parser.add_argument("digest", type=parse_digest)
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
    chain = lineage(runtime(args.store).open_store(), args.digest)
    out.result(chain.as_json(), "\n".join(chain.lines()))
    return 0


def _rederive(args: argparse.Namespace, out: Output) -> int:
    result = rederive(runtime(args.store).context(), STAGES, args.digest, dict(args.locate))
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
