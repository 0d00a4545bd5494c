"""`stele-bench policy check SUITE CHALLENGE [--arm RECORD]`: try a challenge's policy without a run.

Each request (a recorded arm's, from the gateway's log; else one dry request holding the challenge's prompt) is
answered as the gateway would: the rule that fires, why every rule before it did not, and each tool call it would
make checked against the offered tool's ``input_schema``. Exit 1 when a call breaks its tool's schema.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..agent import ArmRecord, read_exchange_log
from ..contracts.files import parse_contract
from ..gateway.dialects import dialect_of
from ..gateway.policy import Policy
from ..gateway.policy_check import TurnCheck, check_request, dry_request
from ..sandbox.layout import WORKSPACE
from ..suite.suite import open_suite
from .digest_arguments import digest_argument, resolve_digest
from .locate import open_store
from .output import Output

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("policy")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    check = verbs.add_parser("check", help="which rule fires at each turn, and why the others did not")
    check.add_argument("suite", type=Path, metavar="SUITE", help="the suite directory")
    check.add_argument("challenge", metavar="CHALLENGE", help="the challenge's id (its directory's name)")
    check.add_argument(
        "--arm", type=digest_argument, metavar="RECORD", help="an arm record (digest or prefix): replay its requests"
    )
    check.set_defaults(handler=_check)


def _describe(check: TurnCheck) -> list[str]:
    recorded = "" if check.recorded in (None, check.fired) else f" (the gateway recorded {check.recorded!r})"
    lines = [f"request {check.request} (turn {check.turn}): rule {check.fired!r} fires{recorded}"]
    lines += [f"  {miss.rule!r} did not: {'; '.join(miss.reasons)}" for miss in check.missed]
    for call in check.calls:
        if not call.checked:
            lines.append(f"  tool {call.tool}: not checked, the request defines no schema for it")
        for error in call.errors:
            lines.append(f"  refused: tool {call.tool}: {error}")
        if call.checked and not call.errors:
            unread = f" ({', '.join(call.unchecked)} not checked)" if call.unchecked else ""
            lines.append(f"  tool {call.tool}: arguments fit its schema{unread}")
    return lines


def _check(args: argparse.Namespace, out: Output) -> int:
    suite = open_suite(args.suite)
    loaded = suite.challenge(args.challenge)
    policy = parse_contract(suite.policy(args.challenge, WORKSPACE), Policy, f"the policy of {args.challenge!r}")
    if args.arm is None:
        checks = [check_request(policy, dry_request(loaded.manifest.prompt))]
    else:
        store = open_store(args, create=False)
        record = store.get_document(resolve_digest(store, args.arm), ArmRecord)
        exchanges = read_exchange_log(store, record.exchanges)
        checks = [
            check_request(policy, e.request_body, i, e.rule, dialect_of(e.dialect))  # as the gateway read it
            for i, e in enumerate(exchanges)
            if isinstance(e.request_body, dict)
        ]
    refused = any(check.refused for check in checks)
    data = {"challenge": args.challenge, "turns": [c.model_dump(mode="json") for c in checks], "refused": refused}
    out.result(data, "\n".join(line for check in checks for line in _describe(check)))
    return 1 if refused else 0  # a check that answered no
