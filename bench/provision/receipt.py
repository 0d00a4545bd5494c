"""The snapshot receipt: proof that the memory a condition was supposed to have was present and retrievable.

The provisioner only reports what it read back (state and each probe's hits); the judgement is made here, against
the fixture's expected hits, which the provisioner never sees. A memory condition whose snapshot shows missing memory,
a failed probe or a refused snapshot makes the pair invalid, recorded with its reasons: never a clean null result.

Only a semantic probe may be *unsupported* (no embedding model can be had offline): the receipt records that with
the provisioner's reason and the pair stays valid. An unsupported full-text or graph probe counts as failed, since
those need nothing a memory system cannot ship.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from bench.contracts import ContractModel, Document, PortablePath

from .errors import ProvisionRefused, RefusalReason
from .fixture import Fixture, FixtureProbe
from .messages import (
    Name,
    ProbeAnswer,
    ProbeKind,
    ProbeStatus,
    RestoreRequest,
    RestoreResponse,
    SnapshotResponse,
)
from .protocol_call import CallRecord

__all__ = [
    "PUBLIC_CONTRACTS",
    "Assessment",
    "PairVerdict",
    "ProbeCheck",
    "ProbeOutcome",
    "SnapshotReceipt",
    "assess",
    "snapshot_receipt",
]


class ProbeOutcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    UNSUPPORTED = "unsupported"


class PairVerdict(StrEnum):
    """Whether the pair this memory condition belongs to may count."""

    VALID = "valid"
    MEMORY_MISSING = "invalid-memory-missing"
    PROBE_FAILED = "invalid-probe-failed"
    SNAPSHOT_REFUSED = "invalid-snapshot-refused"


class ProbeCheck(ContractModel):
    """One declared probe, what came back, and the runner's judgement of it."""

    name: str
    kind: ProbeKind
    query: str
    expected: tuple[PortablePath, ...]
    hits: tuple[PortablePath, ...]
    outcome: ProbeOutcome
    reason: str | None = None


class Assessment(ContractModel):
    """The runner's judgement of one snapshot against the fixture's probes."""

    probes: tuple[ProbeCheck, ...]
    verdict: PairVerdict
    reasons: tuple[str, ...]


class SnapshotReceipt(Document):
    """Restore's and snapshot's replies, every call made so far, and the verdict. ``snapshot`` is None when the
    snapshot was refused; ``refusal`` then names why.

    Restore's reply is kept without the host paths of its locations (the provisioner's per-run directories on this
    machine, which a publication must not carry): ``locations`` names them, and each arm's spec names what it
    mounted from them as ``restore:<system>/<location>``."""

    kind: Literal["snapshot-receipt"] = "snapshot-receipt"
    schema_version: Literal[2] = 2
    fixture_id: str
    graph_arm: str
    run_identity: str
    restored: RestoreResponse
    locations: tuple[Name, ...] = ()
    snapshot: SnapshotResponse | None
    refusal: RefusalReason | None
    calls: tuple[CallRecord, ...]
    assessment: Assessment

    @property
    def verdict(self) -> PairVerdict:
        return self.assessment.verdict


PUBLIC_CONTRACTS: tuple[type[ContractModel], ...] = (SnapshotReceipt,)


def assess(fixture: Fixture, response: SnapshotResponse) -> Assessment:
    """Check a snapshot against the fixture's probes and decide the pair verdict."""
    answers = {a.name: a for a in response.probes}
    checks = tuple(_check(probe, answers.get(probe.name)) for probe in fixture.probes)
    reasons: list[str] = []
    verdict = PairVerdict.VALID
    state = response.state
    if not state.present or state.items == 0:
        verdict = PairVerdict.MEMORY_MISSING
        reasons.append(f"the live memory is missing (present={state.present}, items={state.items})")
    elif state.graph_nodes == 0 and any(probe.kind is ProbeKind.GRAPH for probe in fixture.probes):
        # graph probes would pass from the evidence's own anchors: they would vouch for a graph that is not there
        verdict = PairVerdict.MEMORY_MISSING
        reasons.append(f"the graph arm is empty: no graph node restored (edges={state.graph_edges})")
    failed = [c for c in checks if c.outcome is ProbeOutcome.FAILED]
    if failed and verdict is PairVerdict.VALID:
        verdict = PairVerdict.PROBE_FAILED
    reasons.extend(f"probe {c.name!r} failed: {c.reason}" for c in failed)
    return Assessment(probes=checks, verdict=verdict, reasons=tuple(reasons))


def snapshot_receipt(
    fixture: Fixture,
    request: RestoreRequest,
    restored: RestoreResponse,
    outcome: SnapshotResponse | ProvisionRefused,
    calls: tuple[CallRecord, ...],
) -> SnapshotReceipt:
    """The receipt of one snapshot; a refused snapshot makes the pair invalid with the refusal as its reason."""
    if isinstance(outcome, ProvisionRefused):
        snapshot, refusal = None, outcome.reason_code
        assessment = Assessment(probes=(), verdict=PairVerdict.SNAPSHOT_REFUSED, reasons=(str(outcome),))
    else:
        snapshot, refusal, assessment = outcome, None, assess(fixture, outcome)
    return SnapshotReceipt(
        fixture_id=fixture.fixture_id,
        graph_arm=request.graph_arm,
        run_identity=request.run_identity,
        restored=restored.model_copy(update={"locations": None}),
        locations=tuple(sorted(restored.locations.paths)) if restored.locations is not None else (),
        snapshot=snapshot,
        refusal=refusal,
        calls=calls,
        assessment=assessment,
    )


def _check(probe: FixtureProbe, answer: ProbeAnswer | None) -> ProbeCheck:
    def outcome(result: ProbeOutcome, reason: str | None, hits: tuple[PortablePath, ...] = ()) -> ProbeCheck:
        return ProbeCheck(
            name=probe.name,
            kind=probe.kind,
            query=probe.query,
            expected=probe.expected,
            hits=hits,
            outcome=result,
            reason=reason,
        )

    if answer is None:
        return outcome(ProbeOutcome.FAILED, "the provisioner did not answer it")
    if answer.kind is not probe.kind:
        return outcome(ProbeOutcome.FAILED, f"answered as a {answer.kind.value} probe, declared {probe.kind.value}")
    if answer.status is ProbeStatus.UNSUPPORTED:
        if probe.kind is ProbeKind.SEMANTIC and answer.reason:
            return outcome(ProbeOutcome.UNSUPPORTED, answer.reason)
        return outcome(ProbeOutcome.FAILED, f"reported unsupported ({answer.reason or 'no reason given'})")
    hits = answer.hits[: probe.top_k]
    missing = [e for e in probe.expected if e not in hits]
    if missing:
        return outcome(ProbeOutcome.FAILED, f"expected {', '.join(missing)} among the top {probe.top_k} hits", hits)
    return outcome(ProbeOutcome.PASSED, None, hits)
