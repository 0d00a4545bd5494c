"""A bundle is exactly its run: checks of the lineage's shape that need no stage code, only the bundle.

- **Complete**: every file is the lineage document, an input or output of a listed action (a named file: records,
  admissions, preregistrations, receipts, the report and its pages), or an object one of those brings with it
  (its key and result, a document it refers to, a listing below a tree); no file is anything else, anywhere. And
  every object the lineage brings is in the bundle.
- **Closed**: every input of every listed action is the output of a listed action, unless the stage declares the
  port as given from outside the run (``SUPPLIED``: a suite's file, a hand-assembled bundle's records). A tree only
  an upstream stage makes (the redacted corpus) can therefore never be a given: the lineage chains it back to the
  corpus action and its repository identity (commit and repository, in its key). Every listed action is needed:
  one of its outputs is a named file or another listed action's input.
- **Bound**: a record is named by its own digest (``records/<hex>.json``), an admission by the record it decides,
  which the bundle holds; an admission written by an ``admit`` action decided that action's record input.

Each finding is a :class:`~bench.publish.verification.Difference` with the file and the action it concerns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..analysis import AdmissionDecision
from ..builder import Stage
from ..contracts import Digest, PortablePath
from ..errors import BenchError
from ..store import Store
from ..store.actions import ActionKey, ActionResult
from .bundle_layout import ADMISSIONS, OBJECTS, RECORDS, BundleError, parse_document
from .lineage_files import brought
from .manifest import LINEAGE_PATH, PublishedAction

__all__ = ["Finding", "Listed", "Supplied", "bound", "closed", "complete", "supplied_by"]


@dataclass(frozen=True)
class Listed:
    """One action of the lineage, read from the bundle."""

    action: PublishedAction
    spec: ActionKey
    outcome: ActionResult

    @property
    def head(self) -> str:
        return f"{self.action.stage} (action {self.action.key.short})"


@dataclass(frozen=True)
class Finding:
    """What a check found: the object (or the file) it is about, and why."""

    digest: Digest | None
    path: str | None
    why: str


def complete(store: Store, paths: Mapping[Digest, Sequence[PortablePath]], listed: Sequence[Listed]) -> list[Finding]:
    """Every file is needed by the lineage, and everything the lineage needs is there (see the module docstring)."""
    sides = {digest for item in listed for digest in (*item.spec.inputs.values(), *item.outcome.outputs.values())}
    starts = sides | {digest for item in listed for digest in (item.action.key, item.action.result)}
    found, lacking = brought(store, sorted(starts))  # in one order: the referrer named is the same every run
    findings = [
        Finding(digest, None, f"is referred to by {referrer.short} but is not in the bundle")
        for digest, referrer in sorted(lacking.items())
        if digest not in sides  # an absent input or output is named with its action (verify._absent)
    ]
    for digest, where in sorted(paths.items()):
        for path in where:
            if path == LINEAGE_PATH:
                continue
            named = path.parts[0] != OBJECTS
            if (named and digest not in sides) or (not named and digest not in found):
                why = "is an input or output of no action the lineage lists" if named else "is needed by no action"
                findings.append(Finding(digest, path, f"{why}: a bundle holds its run and nothing else"))
    return findings


Supplied = Callable[[str, str], bool]  # (stage, port) -> whether the stage declares the port SUPPLIED


def supplied_by(stages: Callable[[str], Stage[Any, Any, Any]]) -> Supplied:
    """Whether a stage, as this release declares it, takes a port from outside the run (an unknown stage: no)."""

    def supplied(stage: str, port: str) -> bool:
        try:
            declared = stages(stage).inputs.ports().get(port.partition("/")[0])
        except BenchError:
            return False
        return declared is not None and declared.supplied

    return supplied


def closed(listed: Sequence[Listed], named: set[Digest], supplied: Supplied) -> list[Finding]:
    """Every input produced in the lineage or given where its stage allows it; every action needed."""
    produced = {digest for item in listed for digest in item.outcome.outputs.values()}
    read = {digest for item in listed for digest in item.spec.inputs.values()}
    findings = []
    for item in listed:
        for port, digest in sorted(item.spec.inputs.items()):
            if digest not in produced and not supplied(item.action.stage, port):
                findings.append(
                    Finding(
                        digest,
                        None,
                        f"is input {port} of {item.head}, which only an action of the run may give it, and no "
                        "action the lineage lists output it: the lineage does not reach the suite and the commit",
                    )
                )
        if not any(digest in named or digest in read for digest in item.outcome.outputs.values()):
            findings.append(Finding(item.action.result, None, f"{item.head} is needed by no file and no action"))
    return findings


def bound(files: Mapping[PortablePath, bytes], listed: Sequence[Listed]) -> list[Finding]:
    """Records named by their digests, admissions by the record they decide (held here, and their action's)."""
    findings = []
    records = {path.parts[-1].removesuffix(".json") for path in files if path.parts[0] == RECORDS}
    for path, data in sorted(files.items()):
        if path.parts[0] != RECORDS:  # a record's bytes only: hashing every file again was a fifth of checking shape
            continue
        held = Digest.of(data)
        if held.hex != path.parts[-1].removesuffix(".json"):
            findings.append(Finding(held, path, f"holds record {held}: not the record its name binds"))
    decided_by = {
        item.outcome.outputs.get("admission"): item.spec.inputs.get("record")
        for item in listed
        if item.action.stage == "admit"
    }
    for path, data in sorted(files.items()):
        if path.parts[0] != ADMISSIONS:
            continue
        try:
            decision = parse_document(path, data, AdmissionDecision)
        except BundleError as exc:
            findings.append(Finding(Digest.of(data), path, exc.message))
            continue
        name = path.parts[-1].removesuffix(".json")
        if decision.record.hex != name or name not in records:
            why = f"decides record {decision.record.short}, not the record {RECORDS}/{name}.json its name binds"
            findings.append(Finding(Digest.of(data), path, why))
        action_record = decided_by.get(Digest.of(data))
        if action_record is not None and action_record != decision.record:
            findings.append(Finding(Digest.of(data), path, "decides another record than its admit action read"))
    return findings
