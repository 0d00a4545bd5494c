"""The reference memory system, run as a real executable through the real adapter on the bundled evidence corpus."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from bench.memory.notes import DocKind, NoteFormatError, read_corpus
from bench.memory.semantic import MODEL_DIR_ENV, MODEL_INSTALL, load_embedder
from bench.provision import (
    Fixture,
    PairVerdict,
    ProbeOutcome,
    Provisioner,
    SnapshotReceipt,
    artifact_sha256,
    load_fixture,
    provisioned,
)
from bench.provision.protocol_call import CallRecord

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "tests" / "provision" / "data" / "example-evidence"
# Set only where the embedding model is deliberately absent; its name says the semantic probe went unchecked.
NO_MODEL_OPT_OUT = "STELE_BENCH_NO_EMBEDDING_MODEL"


def _reference(home: Path) -> Provisioner:
    return Provisioner((sys.executable, "-m", "bench.memory", "--home", str(home)), EXAMPLE)


def _round_trip(
    home: Path, run_identity: str = "run-1.attempt-1", root: Path = EXAMPLE
) -> tuple[SnapshotReceipt, list[Path], bytes]:
    fixture = load_fixture(root)
    seen: list[Path] = []
    state: list[bytes] = []

    async def go() -> SnapshotReceipt:
        provisioner = Provisioner((sys.executable, "-m", "bench.memory", "--home", str(home)), root)
        async with provisioned(provisioner, fixture, "backfilled", run_identity) as session:
            seen.extend(home.iterdir())
            state.append((home / session.project / "state.sqlite").read_bytes())
            return await session.snapshot()

    return asyncio.run(go()), seen, state[0]


def test_example_fixture_validates_against_its_exported_schema() -> None:
    manifest = json.loads((EXAMPLE / "fixture.json").read_text())
    jsonschema.Draft202012Validator(Fixture.model_json_schema()).validate(manifest)


def test_round_trip_restore_snapshot_destroy(tmp_path: Path) -> None:
    home = tmp_path / "home"
    receipt, live, state = _round_trip(home)
    outcomes = {c.name: c.outcome for c in receipt.assessment.probes}
    assert receipt.snapshot is not None and receipt.snapshot.state.present
    assert receipt.snapshot.state.items >= 10
    semantic_expected = ProbeOutcome.PASSED
    if load_embedder()[0] is None:
        if not os.environ.get(NO_MODEL_OPT_OUT):
            pytest.fail(f"no embedding model: {load_embedder()[1]} (or set {NO_MODEL_OPT_OUT}=1 to run without it)")
        semantic_expected = ProbeOutcome.UNSUPPORTED
    assert outcomes == {
        "duplicate-delivery-text": ProbeOutcome.PASSED,
        "codec-anchor": ProbeOutcome.PASSED,
        "lease-anchor": ProbeOutcome.PASSED,
        "synchronized-retries-meaning": semantic_expected,
    }
    assert receipt.verdict is PairVerdict.VALID
    assert [p.name for p in live] == [receipt.restored.project]
    assert list(home.iterdir()) == []  # destroyed
    for identifying in (b"example-evidence", b"run-1", b"backfilled", receipt.restored.project.encode()):
        assert identifying not in state  # the state file is visible to the agent


def test_an_empty_graph_arm_is_an_invalid_snapshot_though_evidence_anchors_pass_the_graph_probes(
    tmp_path: Path,
) -> None:
    full, _, _ = _round_trip(tmp_path / "a")
    assert full.snapshot is not None and (full.snapshot.state.graph_nodes or 0) > 0
    root = tmp_path / "fixture"
    shutil.copytree(EXAMPLE, root)
    graph = root / "graphs" / "backfilled.json"
    graph.write_text('{"nodes": [], "edges": []}')
    manifest = json.loads((root / "fixture.json").read_text())
    manifest["graph_arms"][0]["graph"]["sha256"] = artifact_sha256(graph)
    (root / "fixture.json").write_text(json.dumps(manifest))
    empty, _, _ = _round_trip(tmp_path / "b", root=root)
    assert empty.snapshot is not None and empty.snapshot.state.items == full.snapshot.state.items
    assert (empty.snapshot.state.graph_nodes, empty.snapshot.state.graph_edges) == (0, 0)
    assert empty.verdict is PairVerdict.MEMORY_MISSING
    assert any("the graph arm is empty" in reason for reason in empty.assessment.reasons)


def test_a_declared_semantic_probe_without_the_model_is_a_one_line_error_naming_the_install(tmp_path: Path) -> None:
    """The model is a declared dependency: absent (the real lookup pointed at an empty directory), restore refuses
    in one line naming how to install it, and leaves nothing behind; it never reports the probe unsupported."""
    empty = tmp_path / "no-model"
    empty.mkdir()
    home = tmp_path / "home"
    done = _run_verb(home, "restore", _restore_request(), {MODEL_DIR_ENV: str(empty)})
    assert done.returncode == 1 and done.stdout == b""
    (line,) = done.stderr.decode().splitlines()
    assert "semantic probe" in line and f"`{MODEL_INSTALL}`" in line and "model.safetensors" in line
    assert not home.exists() or list(home.iterdir()) == []
    without_semantic = _restore_request()
    without_semantic["probes"] = [p for p in without_semantic["probes"] if p["kind"] != "semantic"]
    assert _run_verb(home, "restore", without_semantic, {MODEL_DIR_ENV: str(empty)}).returncode == 0


def test_fingerprint_is_stable_across_restores(tmp_path: Path) -> None:
    first, _, _ = _round_trip(tmp_path / "a", "run-1")
    second, _, _ = _round_trip(tmp_path / "b", "run-2")
    assert first.snapshot and second.snapshot
    assert first.snapshot.state.fingerprint == second.snapshot.state.fingerprint
    assert first.restored.project != second.restored.project


def test_snapshot_of_a_missing_project_is_invalid(tmp_path: Path) -> None:
    fixture = load_fixture(EXAMPLE)
    provisioner = _reference(tmp_path)
    log: list[CallRecord] = []
    response = asyncio.run(provisioner.snapshot("rnothere", log))
    from bench.provision import assess

    assert assess(fixture, response).verdict is PairVerdict.MEMORY_MISSING


def _run_verb(
    home: Path, verb: str, request: dict, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "bench.memory", "--home", str(home), verb],
        input=json.dumps(request).encode(),
        capture_output=True,
        check=False,
        cwd=REPO,
        env={**os.environ, **(env or {})},
    )


def _restore_request(graph: Path | None = None, sha: str | None = None) -> dict:
    request = _reference(Path("/unused")).restore_request(load_fixture(EXAMPLE), "backfilled", "run-x")
    data = request.model_dump(mode="json")
    if graph is not None:
        data["artifacts"]["graph"] = {"path": str(graph), "sha256": sha}
    return data


def test_reference_system_rechecks_artifact_digests(tmp_path: Path) -> None:
    request = _restore_request()
    request["artifacts"]["evidence_corpus"]["sha256"] = "0" * 64
    done = _run_verb(tmp_path, "restore", request)
    assert done.returncode == 1
    assert b"SHA-256" in done.stderr and done.stdout == b""


def test_reference_system_refuses_unknown_request_fields(tmp_path: Path) -> None:
    done = _run_verb(tmp_path, "destroy", {"project": "r1", "force": True})
    assert done.returncode == 2 and b"force" in done.stderr


def test_graph_edge_to_an_unknown_node_fails_restore_and_leaves_nothing(tmp_path: Path) -> None:

    graph = tmp_path / "graph.json"
    graph.write_text(
        json.dumps({"nodes": [], "edges": [{"src": "doc:adr/0001-retry-backoff.md", "dst": "x", "kind": "k"}]})
    )
    home = tmp_path / "home"
    done = _run_verb(home, "restore", _restore_request(graph, artifact_sha256(graph)))
    assert done.returncode == 1 and b"unknown node" in done.stderr
    assert list(home.iterdir()) == []


def test_the_same_run_restored_twice_gets_two_projects_that_never_collide(tmp_path: Path) -> None:
    """Runs share the default home (the temp directory), so a project name is salted per restore."""
    home = tmp_path / "home"
    first, second = (json.loads(_run_verb(home, "restore", _restore_request()).stdout) for _ in range(2))
    assert first["project"] != second["project"]
    assert {first["locations"]["paths"]["state"], second["locations"]["paths"]["state"]} == {
        str(home / first["project"] / "state.sqlite"),
        str(home / second["project"] / "state.sqlite"),
    }
    assert _run_verb(home, "destroy", {"project": first["project"]}).returncode == 0
    assert not (home / first["project"]).exists() and (home / second["project"] / "hook.py").is_file()


def test_corpus_convention(tmp_path: Path) -> None:
    (tmp_path / "adr").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "adr" / "0001-x.md").write_text(
        "# Use X\n\nAnchors: src/a.py, src/store/\nAnchors: src/b.py\n\n## Decision\n\nUse X. See [b](../notes/b.md).\n"
    )
    (tmp_path / "notes" / "b.md").write_text("Kind: issue\nRelated: adr/0001-x.md\n\nNo heading here.\n")
    a, b = read_corpus(tmp_path)
    assert (a.id, a.kind, a.title) == ("adr/0001-x.md", DocKind.DECISION, "Use X")
    assert a.anchors == ("src/a.py", "src/store/", "src/b.py")
    assert a.related == ("notes/b.md",)
    assert [p.heading for p in a.passages] == ["Decision"]
    assert all("Anchors" not in p.text for p in a.passages)
    assert (b.kind, b.title, b.related) == (DocKind.ISSUE, "b", ("adr/0001-x.md",))


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("a.md", "Anchors: /etc/passwd\n", "not a workspace-relative"),
        ("a.md", "Anchors: src/../../x\n", "not a workspace-relative"),
        ("a.md", "Kind: rumour\n", "Kind 'rumour'"),
        ("a.md", "Related: nowhere.md\n", "does not hold"),
        ("a.json", "{}", "not markdown"),
    ],
)
def test_corpus_convention_violations_name_the_file(tmp_path: Path, name: str, text: str, problem: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(NoteFormatError, match=problem):
        read_corpus(tmp_path)
