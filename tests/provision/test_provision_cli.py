"""`stele-bench provision VERB` drives a provisioner by hand (every verb, and digest), through the real adapter."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from bench.cli import main
from bench.memory.semantic import MODEL_DIR_ENV, MODEL_INSTALL

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "tests" / "provision" / "data" / "example-evidence"


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main(["--json", *argv])
    return code, json.loads(capsys.readouterr().out)


def test_restore_snapshot_destroy_by_hand(tmp_path: Path, capsys) -> None:
    home = tmp_path / "home"
    common = ["--provisioner", shlex.join([sys.executable, "-m", "bench.memory", "--home", str(home)])]
    common += ["--fixture-root", str(EXAMPLE)]
    code, restored = _json(capsys, "provision", "restore", *common, "--graph-arm", "backfilled", "--run-identity", "m1")
    assert code == 0
    project = restored["response"]["project"]
    assert (home / project / "state.sqlite").is_file()
    code, snapshot = _json(capsys, "provision", "snapshot", *common, "--memory-project", project)
    assert code == 0
    assert snapshot["assessment"]["verdict"] == "valid"
    assert {p["outcome"] for p in snapshot["assessment"]["probes"]} == {"passed"}
    code, destroyed = _json(capsys, "provision", "destroy", *common, "--memory-project", project)
    assert code == 0 and destroyed["ok"] is True
    assert not (home / project).exists()
    code, missing = _json(capsys, "provision", "snapshot", *common, "--memory-project", project)
    assert code == 1 and missing["assessment"]["verdict"] == "invalid-memory-missing"


def test_retrieve_by_hand_answers_each_event_and_refuses_a_malformed_one(tmp_path: Path, capsys) -> None:
    common = ["--provisioner", shlex.join([sys.executable, "-m", "bench.memory", "--home", str(tmp_path / "home")])]
    common += ["--fixture-root", str(EXAMPLE)]
    code, restored = _json(capsys, "provision", "restore", *common, "--graph-arm", "backfilled", "--run-identity", "m2")
    project = restored["response"]["project"]
    assert restored["response"]["retrieval"] == {"version": 1, "deterministic": True}
    prompt = {"hook_event_name": "UserPromptSubmit", "cwd": "/workspace", "prompt": "why the visibility timeout?"}
    read = {
        "hook_event_name": "PostToolUse",
        "cwd": "/workspace",
        "tool_name": "Read",
        "tool_input": {"file_path": "/workspace/NOWHERE.md"},
    }
    events = ["--event", json.dumps(prompt), "--event", json.dumps(read)]
    code, answered = _json(capsys, "provision", "retrieve", *common, "--memory-project", project, *events)
    assert code == 0
    first, second = answered["response"]["contexts"]
    assert first.startswith("<!-- recall:prompt -->") and "adr/0002-visibility-timeout.md" in first
    assert second is None  # no note is anchored to that file
    assert [call["verb"] for call in answered["calls"]] == ["retrieve"]
    duplicated = '{"cwd": "/w", "cwd": "/x"}'
    assert main(["provision", "retrieve", *common, "--memory-project", project, "--event", duplicated]) == 2
    assert "repeats the key 'cwd'" in capsys.readouterr().err
    _json(capsys, "provision", "destroy", *common, "--memory-project", project)


def test_refusal_is_an_error_naming_its_reason(tmp_path: Path, capsys) -> None:
    code = main(
        ["provision", "destroy", "--provisioner", "false", "--fixture-root", str(EXAMPLE), "--memory-project", "p"]
    )
    assert code == 11  # the provisioner family's exit code
    assert "[nonzero-exit]" in capsys.readouterr().err


def test_digest_matches_the_manifest(capsys) -> None:
    code, printed = _json(capsys, "provision", "digest", str(EXAMPLE / "evidence"))
    manifest = json.loads((EXAMPLE / "fixture.json").read_text())
    assert code == 0 and printed["sha256"] == manifest["evidence_corpus"]["sha256"]


def test_a_declared_semantic_probe_without_the_model_is_refused_in_one_line_naming_the_install(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """The provisioner runs as a real subprocess whose model lookup is pointed at an empty directory."""
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path))
    home = tmp_path / "home"
    provisioner = shlex.join([sys.executable, "-m", "bench.memory", "--home", str(home)])
    argv = ["provision", "restore", "--provisioner", provisioner, "--fixture-root", str(EXAMPLE)]
    code = main([*argv, "--graph-arm", "backfilled", "--run-identity", "m1"])
    (line,) = capsys.readouterr().err.splitlines()
    assert code == 11 and "semantic probe" in line and f"`{MODEL_INSTALL}`" in line
    assert not home.exists() or list(home.iterdir()) == []


def test_the_old_spelling_of_the_memory_project_is_refused_naming_the_new_one(tmp_path: Path, capsys) -> None:
    common = ["--provisioner", "never-started", "--fixture-root", str(EXAMPLE)]
    code, refused = _json(capsys, "provision", "destroy", *common, "--project", "p1")
    assert code == 2 and refused["error"]["code"] == "usage", refused
    assert "--memory-project" in refused["error"]["message"] and "stele-bench project" in refused["error"]["hint"]
