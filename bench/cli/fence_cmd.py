"""`stele-bench fence check --config FILE --pair-cap USD`: run the money fence's preflight and print its checks."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..contracts import Digest
from ..errors import FenceError
from ..fence import Fence, FenceOutcome, FenceStopped, load_config, read_record
from .locate import open_store
from .numbers import usd
from .output import Output

__all__ = ["register"]

EXIT_STOPPED = FenceError.exit_code


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("fence", help="the money fence that guards paid pairs")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    check = verbs.add_parser("check", help="run the preflight (key identity, key budget, headroom); exit 12 if stopped")
    check.add_argument("--config", type=Path, required=True, help="fence config JSON file")
    check.add_argument("--pair-cap", type=usd, required=True, help="the pair cap to acknowledge, in USD")
    check.add_argument("--pair", default="preflight-check", help="the pair the records belong to")
    check.set_defaults(handler=_check)


def _check(args: argparse.Namespace, out: Output) -> int:
    store = open_store(args, create=True)
    fence = Fence(store, args.pair, load_config(args.config))
    try:
        record: Digest = fence.preflight(args.pair_cap)
    except FenceStopped as stop:
        record = stop.record
    document, checks = read_record(store, record)
    data = {
        "record": record,
        "pair": document.pair,
        "outcome": document.outcome.value,
        "checks": [
            check.model_dump(mode="json", include={"check", "verdict", "reason", "observed_usd"}) for check in checks
        ],
    }
    lines = [f"{check.check.value}: {check.verdict.value}: {check.reason}" for check in checks]
    lines.append(f"{document.outcome.value} (fence record {record})")
    out.result(data, "\n".join(lines))
    return 0 if document.outcome is FenceOutcome.CLEARED else EXIT_STOPPED
