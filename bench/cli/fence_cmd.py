"""`stele-bench fence check --config FILE --pair-cap USD`: run the money fence's preflight and print its checks.

`stele-bench fence resume --reason TEXT [--key HEX]`: record the operator's decision that an account a fence stop
latched may spend again (bench.fence.account); the decision is a store document that every later attempt's fence
records name, so it is published with them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..contracts import Digest
from ..errors import FenceError, UsageError
from ..fence import Fence, FenceOutcome, FenceStopped, load_config, read_record, resume_account, stopped_accounts
from .locate import open_store
from .numbers import usd
from .output import Output

__all__ = ["register"]

EXIT_STOPPED = FenceError.exit_code


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("fence")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    check = verbs.add_parser("check", help="run the preflight (key identity, key budget, headroom); exit 12 if stopped")
    check.add_argument("--config", type=Path, required=True, help="fence config JSON file")
    check.add_argument("--pair-cap", type=usd, required=True, help="the pair cap to acknowledge, in USD")
    check.add_argument("--pair", default="preflight-check", help="the pair the records belong to")
    check.set_defaults(handler=_check)
    resume = verbs.add_parser("resume", help="lift a stopped account's latch, recording why; no paid run starts before")
    resume.add_argument("--reason", required=True, help="why the account may spend again (kept in the record)")
    resume.add_argument("--key", help="the stopped key's SHA-256 or a prefix of it; needed when several are stopped")
    resume.set_defaults(handler=_resume)


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


def _resume(args: argparse.Namespace, out: Output) -> int:
    reason = " ".join(args.reason.split())
    if not reason or len(reason) > 2000:
        raise UsageError("--reason must say, in 1 to 2000 characters, why the account may spend again", field="reason")
    store = open_store(args, create=False)
    stopped = stopped_accounts(store)
    chosen = {account: stop for account, stop in stopped.items() if account.startswith(args.key or "")}
    if len(chosen) != 1:
        named = ", ".join(f"{account[:12]}... (fence record {stop})" for account, stop in stopped.items())
        raise UsageError(
            f"{len(chosen)} stopped account(s) match --key {args.key!r}; stopped: {named or 'none'}",
            field="key",
            hint="pass --key with the fingerprint of the one to resume" if chosen else None,
        )
    ((account, stop),) = chosen.items()
    decision = resume_account(store, account, reason)
    data = {"decision": decision, "account": account, "stop": stop, "reason": reason}
    out.result(data, f"resumed the account of key {account[:12]}... (stopped by {stop}): decision {decision}")
    return 0
