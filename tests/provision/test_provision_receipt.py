"""The snapshot receipt: missing memory or a failed probe makes the pair invalid, never a clean null."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bench.contracts import canonical_bytes
from bench.provision import Fixture, PairVerdict, ProbeOutcome, SnapshotReceipt, provisioned
from bench.provision.fixture import load_fixture
from bench.provision.messages import MemoryState, ProbeAnswer, SnapshotResponse
from bench.provision.receipt import assess


def _fixture_with_all_kinds(root: Path, base: Fixture) -> Fixture:
    data = base.model_dump(mode="json")
    data["probes"] = [
        {"name": "text", "kind": "full-text", "query": "tenant", "expected": ["cache.md"]},
        {"name": "meaning", "kind": "semantic", "query": "isolation of customers", "expected": ["cache.md"]},
        {"name": "anchor", "kind": "graph", "query": "src/cache.py", "top_k": 1, "expected": ["cache.md"]},
    ]
    return Fixture.model_validate_json(json.dumps(data))


def _response(answers: list[dict], present: bool = True, items: int = 4) -> SnapshotResponse:
    return SnapshotResponse(
        state=MemoryState(present=present, items=items, fingerprint="a" * 64),
        probes=tuple(ProbeAnswer.model_validate_json(json.dumps(a)) for a in answers),
        queue_after_count=0,
        snapshot_seconds=0.1,
    )


GOOD = [
    {"name": "text", "kind": "full-text", "status": "answered", "hits": ("deploy.md", "cache.md")},
    {"name": "meaning", "kind": "semantic", "status": "answered", "hits": ("cache.md",)},
    {"name": "anchor", "kind": "graph", "status": "answered", "hits": ("cache.md", "deploy.md")},
]


def _with(name: str, **changes) -> list[dict]:
    return [dict(a, **changes) if a["name"] == name else a for a in GOOD]


def test_all_probes_passing_is_valid(tiny_fixture) -> None:
    root, base = tiny_fixture
    assessment = assess(_fixture_with_all_kinds(root, base), _response(GOOD))
    assert assessment.verdict is PairVerdict.VALID
    assert [c.outcome for c in assessment.probes] == [ProbeOutcome.PASSED] * 3


def test_empty_memory_is_invalid_even_when_probes_pass(tiny_fixture) -> None:
    root, base = tiny_fixture
    assessment = assess(_fixture_with_all_kinds(root, base), _response(GOOD, items=0))
    assert assessment.verdict is PairVerdict.MEMORY_MISSING
    assert "missing" in assessment.reasons[0]


def test_absent_memory_is_invalid(tiny_fixture) -> None:
    root, base = tiny_fixture
    assert assess(_fixture_with_all_kinds(root, base), _response(GOOD, present=False)).verdict is (
        PairVerdict.MEMORY_MISSING
    )


def test_expected_hit_outside_top_k_fails(tiny_fixture) -> None:
    root, base = tiny_fixture
    # the graph probe declares top_k=1; the expected document is second
    assessment = assess(_fixture_with_all_kinds(root, base), _response(_with("anchor", hits=("deploy.md", "cache.md"))))
    assert assessment.verdict is PairVerdict.PROBE_FAILED
    assert "anchor" in assessment.reasons[0]


def test_unanswered_probe_fails(tiny_fixture) -> None:
    root, base = tiny_fixture
    assessment = assess(_fixture_with_all_kinds(root, base), _response(GOOD[:2]))
    assert assessment.verdict is PairVerdict.PROBE_FAILED
    assert assessment.probes[2].reason == "the provisioner did not answer it"


def test_probe_answered_as_another_kind_fails(tiny_fixture) -> None:
    root, base = tiny_fixture
    assessment = assess(_fixture_with_all_kinds(root, base), _response(_with("text", kind="semantic")))
    assert assessment.probes[0].outcome is ProbeOutcome.FAILED


def test_unsupported_semantic_probe_is_recorded_and_stays_valid(tiny_fixture) -> None:
    root, base = tiny_fixture
    answers = _with("meaning", status="unsupported", hits=(), reason="no embedding model offline")
    assessment = assess(_fixture_with_all_kinds(root, base), _response(answers))
    assert assessment.verdict is PairVerdict.VALID
    assert assessment.probes[1].outcome is ProbeOutcome.UNSUPPORTED
    assert assessment.probes[1].reason == "no embedding model offline"


def test_unsupported_without_reason_fails(tiny_fixture) -> None:
    root, base = tiny_fixture
    answers = _with("meaning", status="unsupported", hits=())
    assert assess(_fixture_with_all_kinds(root, base), _response(answers)).verdict is PairVerdict.PROBE_FAILED


def test_unsupported_full_text_probe_fails(tiny_fixture) -> None:
    root, base = tiny_fixture
    answers = _with("text", status="unsupported", hits=(), reason="not implemented")
    assert assess(_fixture_with_all_kinds(root, base), _response(answers)).verdict is PairVerdict.PROBE_FAILED


def test_receipt_from_a_run_records_calls_and_round_trips(fake, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    f = fake(answers=[{"name": "tenant", "kind": "full-text", "status": "answered", "hits": ["cache.md"]}])

    async def go() -> SnapshotReceipt:
        async with provisioned(f.provisioner(root), fixture, "plain", "run-9") as session:
            return await session.snapshot()

    receipt = asyncio.run(go())
    assert receipt.verdict is PairVerdict.VALID
    assert receipt.run_identity == "run-9" and receipt.restored.project == "p1"
    assert [c.verb.value for c in receipt.calls] == ["restore", "snapshot"]
    assert SnapshotReceipt.model_validate_json(receipt.model_dump_json()) == receipt
    assert load_fixture(root) == fixture


def test_receipt_keeps_restore_locations_by_name_never_by_host_path(fake, tiny_fixture, tmp_path) -> None:
    """A provisioner's per-run directories are this machine's: a publication of the receipt must not carry them."""
    root, fixture = tiny_fixture
    state = tmp_path / "per-run-state-7f3a"
    f = fake(locations={"state": str(state), "hook": str(state / "hook.py")})

    async def go() -> SnapshotReceipt:
        async with provisioned(f.provisioner(root), fixture, "plain", "run-9") as session:
            assert session.restored.locations is not None  # the runner mounts from the paths while it runs
            return await session.snapshot()

    receipt = asyncio.run(go())
    assert receipt.locations == ("hook", "state") and receipt.restored.locations is None
    assert str(state).encode() not in canonical_bytes(receipt)
