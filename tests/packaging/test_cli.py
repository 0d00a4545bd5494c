"""`stele-bench corpus`, `redact` and `certify` end to end: through the engine, so a rerun executes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.cli import main
from bench.provision.fixture import artifact_sha256
from tests.packaging.challenge_fields import challenge_fields
from tests.packaging.gitrepos import RepoFactory

VERIFIER = b"#!/bin/sh\nexec true\n"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


def _fixture(root: Path, graph: dict[str, Any]) -> Path:
    (root / "evidence" / "notes").mkdir(parents=True)
    (root / "evidence" / "notes" / "settings.md").write_text("Labels come from one table; spin up test fixtures.\n")
    (root / "graph.json").write_text(json.dumps(graph))
    manifest = {
        "fixture_id": "settings",
        "evidence_corpus": {"path": "evidence", "sha256": artifact_sha256(root / "evidence")},
        "graph_arms": [
            {"name": "graph", "graph": {"path": "graph.json", "sha256": artifact_sha256(root / "graph.json")}}
        ],
        "probes": [{"name": "labels", "kind": "full-text", "query": "labels", "expected": ["notes/settings.md"]}],
        "memory_phrases": ["labels come from one table"],
        "redact_paths": ["notes/private.md"],
    }
    (root / "fixture.json").write_text(json.dumps(manifest))
    return root


def _challenge(directory: Path) -> Path:
    directory.mkdir()
    (directory / "verifier.sh").write_bytes(VERIFIER)
    manifest = challenge_fields(VERIFIER)
    (directory / "challenge.json").write_text(json.dumps(manifest))
    return directory


def test_corpus_redact_certify_and_reruns_are_cached(
    make_repo: RepoFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, commit = make_repo({"src/settings.rs": b"// settings\n", "CLAUDE.md": b"memory\n", "notes/private.md": b"x"})
    store = str(tmp_path / "store")
    code, first = _run(capsys, "--store", store, "corpus", str(repo), "main", "--json")
    assert (code, first["ran"], first["receipt"]["commit"]) == (0, True, commit)
    _, again = _run(capsys, "--store", store, "--json", "corpus", str(repo), commit)
    assert (again["ran"], again["outputs"]) == (False, first["outputs"])

    fixture = _fixture(tmp_path / "fixture", {"project": "acme", "workspace": "main", "branch": "main", "nodes": []})
    tree = first["outputs"]["tree"]
    _, redacted = _run(capsys, "--store", store, "--json", "redact", tree, "--fixture", str(fixture))
    assert {r["path"] for r in redacted["receipt"]["removed"]} == {"CLAUDE.md", "notes/private.md", "notes"}
    _, redacted_again = _run(capsys, "--store", store, "--json", "redact", tree, "--fixture", str(fixture))
    assert (redacted["ran"], redacted_again["ran"]) == (True, False)

    challenge = _challenge(tmp_path / "challenge")
    argv = ["--store", store, "--json", "certify", "--fixture", str(fixture), "--challenge", str(challenge)]
    code, unredacted = _run(capsys, *argv, "--source", tree)
    assert (code, unredacted["report"]["verdict"]) == (1, "rejected")
    assert {f["path"] for f in unredacted["report"]["findings"]} == {"CLAUDE.md"}
    code, report = _run(capsys, *argv, "--source", redacted["outputs"]["tree"])
    assert (code, report["ran"], report["report"]["verdict"]) == (0, True, "certified")
    code, rerun = _run(capsys, *argv, "--source", redacted["outputs"]["tree"])
    assert (code, rerun["ran"], rerun["outputs"]) == (0, False, report["outputs"])

    monkeypatch.delenv("STELE_BENCH_UNCHECKED_CORPUS_ALLOWED", raising=False)
    assert main(argv) == 15  # no source and no opt-out: a stage error (exit 15) naming the way out
    assert "STELE_BENCH_UNCHECKED_CORPUS_ALLOWED=1" in capsys.readouterr().err
    monkeypatch.setenv("STELE_BENCH_UNCHECKED_CORPUS_ALLOWED", "1")
    code, unchecked = _run(capsys, *argv)
    assert (code, unchecked["report"]["verdict"]) == (0, "certified-with-source-corpus-unchecked")
    assert unchecked["report"]["unchecked"]


def test_a_missing_fixture_artifact_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixture = _fixture(tmp_path / "fixture", {"project": "acme", "nodes": []})
    (fixture / "graph.json").unlink()
    challenge = _challenge(tmp_path / "challenge")
    argv = ["--store", str(tmp_path / "store"), "certify", "--fixture", str(fixture), "--challenge", str(challenge)]
    assert main([*argv, "--source", "blake3:" + "0" * 64 + ":0"]) != 0
    assert "graph.json" in capsys.readouterr().err
