"""`stele-bench ls [runs|attempts|bundles]`: what the project's store holds, by what a person asks about.

- runs: each `demo` or `run` (its ref ``runs/<suite>/<start>``): when, how long, what ran, whether it verified;
- attempts: every paired attempt any run recorded, with each arm's outcome and its admission;
- bundles: every published bundle (refs ``published/<suite>``) with its records and admissions.

Every listed digest is printed short; each command that takes a digest takes that back. Each listing imports
the contracts it reads when it runs, so `ls runs` does not load the analysis and publication packages.
"""

from __future__ import annotations

import argparse
import enum
import time
from typing import TYPE_CHECKING, Any

from ..store.actions import ActionKey, ActionResult
from .locate import open_store
from .output import Output

if TYPE_CHECKING:
    from ..analysis.admission import AdmissionDecision
    from ..analysis.attempt_record import ArmResult
    from ..contracts import Digest
    from ..store import Store

__all__ = ["register"]


class Listing(enum.StrEnum):
    RUNS = "runs"
    ATTEMPTS = "attempts"
    BUNDLES = "bundles"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("ls")
    parser.add_argument(
        "what",
        nargs="?",
        type=Listing,
        choices=list(Listing),
        metavar="WHAT",
        help="runs, attempts or bundles (default: all three)",
    )
    parser.set_defaults(handler=_ls)


def _runs(store: Store) -> tuple[list[dict[str, Any]], list[str]]:
    from ..pipeline.progress import elapsed
    from ..run.run_record import run_records

    rows, lines = [], []
    for name, record in run_records(store):
        row = {"ref": name, **record.model_dump(mode="json", exclude={"kind", "schema_version"})}
        rows.append(row)
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(record.started))
        verdict = "verified" if record.verified else "NOT verified"
        took = elapsed(record.ended - record.started)
        lines.append(f"  {when}  {record.suite_id:<16} {took:>8}  {record.executed:>4} ran  {verdict}  {name}")
    return rows, lines


def _arm(arm: ArmResult | None) -> str:
    if arm is None:
        return "-"
    return f"{arm.outcome.value}{'+delivered' if arm.delivered else ''}"


def _results_of(store: Store, stage: str) -> list[tuple[ActionKey, ActionResult]]:
    found = []
    for digest in store.backend.results_since(0.0):
        result = store.get_document(digest, ActionResult)
        key = store.get_document(result.key, ActionKey)
        if key.stage == stage:
            found.append((key, result))
    return found


def _attempts(store: Store) -> tuple[list[dict[str, Any]], list[str]]:
    from ..analysis.admission import AdmissionDecision
    from ..analysis.attempt_record import PairedAttempt

    decisions: dict[Digest, AdmissionDecision] = {}
    for key, result in _results_of(store, "admit"):
        if store.has(result.outputs["admission"]):
            decisions[key.inputs["record"]] = store.get_document(result.outputs["admission"], AdmissionDecision)
    rows, lines = [], []
    records = [result.outputs["record"] for _, result in _results_of(store, "paired-record")]
    for digest in dict.fromkeys(records):
        if not store.has(digest):
            continue
        record = store.get_document(digest, PairedAttempt)
        decision = decisions.get(digest)
        admitted = "?" if decision is None else decision.decision.value
        if decision is not None and decision.decision.value != "admitted":
            admitted += f" ({decision.reason.value})"
        rows.append(
            {
                "record": digest,
                "challenge": record.key.challenge,
                "attempt": record.attempt,
                "build": record.build.label,
                "control": None if record.control is None else record.control.model_dump(mode="json"),
                "treatment": None if record.treatment is None else record.treatment.model_dump(mode="json"),
                "admission": None if decision is None else decision.model_dump(mode="json"),
            }
        )
        system = record.key.treatment_condition.split(":", 1)[0]
        lines.append(
            f"  {digest.short}  {record.key.challenge:<20} #{record.attempt:<3} control {_arm(record.control):<16} "
            f"{system} {_arm(record.treatment):<16} {admitted}"
        )
    return rows, lines


def _bundles(store: Store) -> tuple[list[dict[str, Any]], list[str]]:
    from ..results import load_bundle

    rows, lines = [], []
    for name, tree in store.refs().items():
        if not name.startswith("published/"):
            continue
        bundle = load_bundle(name, store)
        admitted = sum(1 for d in bundle.admissions.values() if d.decision.value == "admitted")
        rows.append({"ref": name, "tree": tree, "records": len(bundle.records), "admitted": admitted})
        lines.append(f"  {tree.short}  {name:<28} {len(bundle.records):>3} records, {admitted} admitted")
    return rows, lines


_LISTERS = {Listing.RUNS: _runs, Listing.ATTEMPTS: _attempts, Listing.BUNDLES: _bundles}


def _ls(args: argparse.Namespace, out: Output) -> int:
    store = open_store(args, create=False)
    wanted = [args.what] if args.what is not None else list(Listing)
    data: dict[str, Any] = {"store": store.location}
    lines = [f"store {store.location}"]
    for listing in wanted:
        rows, shown = _LISTERS[listing](store)
        data[listing.value] = rows
        lines.append(f"{listing.value} ({len(rows)}):")
        lines += shown or ["  (none)"]
    out.result(data, "\n".join(lines))
    return 0
