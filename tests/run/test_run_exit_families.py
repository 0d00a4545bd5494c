"""Exit codes keep their family through the pipeline (issue 32, build item 5): the stage that failed decides the
code, and the --json error carries its code, message, stage and task.

A fence stop inside `run` exits 12 (the fence's own code, as `fence check` would), a publication check that fails
inside the publish stage 14, an unreachable Ray cluster 16 before anything starts (the store's 3 and 8 and a full
disk's 74, met mid-attempt, are in test_run_faults.py). Each `run` is of a one-challenge, one-system copy of the
example suite inside a copy of the session's demo project, so only that pair's stages run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from demo_runs import REPO, DemoRuns, bench_command

pytestmark = pytest.mark.slow

EXAMPLE = REPO / "challenges" / "example"
KEY = "sk-or-test-key-that-reaches-nothing"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed once the probe is: a connection there is refused


def _suite(project: Path, name: str, edit: Callable[[dict[str, Any]], None]) -> Path:
    """``suites/NAME`` in ``project``: the example with its first challenge and the reference memory only."""
    suite = project / "suites" / name
    shutil.copytree(EXAMPLE, suite, symlinks=True)
    manifest = json.loads((suite / "suite.json").read_text())
    kept = manifest["challenges"][0]["directory"]
    manifest.update(suite_id=name, challenges=manifest["challenges"][:1])
    manifest["memory_systems"] = [system for system in manifest["memory_systems"] if system["name"] == "reference"]
    manifest.pop("baseline")
    edit(manifest)
    (suite / "suite.json").write_text(json.dumps(manifest, indent=2))
    for directory in suite.iterdir():
        if (directory / "challenge.json").is_file() and directory.name != kept:
            shutil.rmtree(directory)
    return suite


def _run(project: Path, *argv: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    named = ("STELE_BENCH_STORE", "STELE_BENCH_PROJECT", "STELE_BENCH_DOIT_DB")
    environment = {**{k: v for k, v in os.environ.items() if k not in named}, **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--json", *argv],
        cwd=project,
        env=environment,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout + done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-4000:]
    said = [line for line in done.stderr.splitlines() if line.startswith("stele-bench: ")]
    assert len(said) == 1, done.stderr[-4000:]  # one line, whatever the cause's message held
    return done.returncode, json.loads(lines[0]), done.stderr


@pytest.fixture
def project(demo_runs: DemoRuns, tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(demo_runs.project, copy, symlinks=True)
    return copy


def test_a_fence_stop_inside_a_run_exits_12_with_the_fences_error(project: Path) -> None:
    def forward(manifest: dict[str, Any]) -> None:
        manifest["gateway_mode"] = "forward"
        manifest["forward"] = {
            "upstream_env": "FAMILY_BASE_URL",
            "key_env": "FAMILY_KEY",
            "prices": {  # every model the suite declares, one per harness it may run under
                model: {"input": "3", "output": "15", "cache_write": "3.75", "cache_read": "0.3"}
                for model in {manifest["model"], *manifest.get("models", {}).values()}
            },
            "arm_cap_usd": "1.00",
            "pair_cap_usd": "2.00",
            "fence": {
                "quota_url_env": "FAMILY_QUOTA_URL",
                "key_sha256": hashlib.sha256(KEY.encode()).hexdigest(),
                "production_reserve_usd": "1",
            },
        }

    _suite(project, "forward", forward)
    assert bench_command(project, "prereg", "freeze", "suites/forward").returncode == 0
    nowhere = f"http://127.0.0.1:{_closed_port()}"  # the quota API cannot be read: the preflight stops the pair
    env = {"FAMILY_BASE_URL": nowhere, "FAMILY_KEY": KEY, "FAMILY_QUOTA_URL": nowhere}
    code, answer, _ = _run(project, "run", "suites/forward", "--attempts", "1", env=env)
    error = answer["error"]
    assert (code, error["exit_code"], error["code"]) == (12, 12, "fence-stopped"), error
    assert (error["stage"], error["check"]) == ("paired-attempt", "key-budget"), error
    assert error["record"].startswith("blake3:")  # the stop was recorded, and the error says where


def test_a_publication_refused_inside_a_run_exits_14_naming_the_finding(project: Path) -> None:
    suite = _suite(project, "leaky", lambda manifest: None)
    assert bench_command(project, "prereg", "freeze", "suites/leaky").returncode == 0
    text = (suite / "suite.json").read_text().replace('"version": "1"', '"version": "1.1"', 1)
    (suite / "suite.json").write_text(text)
    why = "the provider key AKIAIOSFODNN7EXAMPLE was rotated"  # a secret the publication check must refuse
    challenge = json.loads(text)["challenges"][0]["directory"]
    corrected = bench_command(project, "prereg", "correct", "suites/leaky", challenge, "--reason", why)
    assert corrected.returncode == 0, corrected.stderr
    code, answer, stderr = _run(project, "run", "suites/leaky", "--attempts", "1")
    error = answer["error"]
    assert (code, error["code"], error["stage"]) == (14, "publication-refused", "publish"), error
    assert any("AWS access key id" in finding for finding in error["findings"]), error
    assert "AKIAIOSFODNN7EXAMPLE" not in stderr + json.dumps(answer)  # the secret itself is never echoed


def test_an_unreachable_cluster_is_refused_with_16_before_anything_starts(tmp_path: Path) -> None:
    project = tmp_path / "project"
    assert bench_command(REPO, "init", str(project)).returncode == 0
    address = f"ray://127.0.0.1:{_closed_port()}"
    code, answer, _ = _run(project, "demo", "--executor", address)
    assert (code, answer["error"]["code"]) == (16, "executor"), answer
    assert address in answer["error"]["message"]
    assert not (project / "store").exists()  # refused before the store, the images or doit
    pipeline = [sys.executable, "-m", "bench.run.dodo", f"executor={address}", f"store={tmp_path / 'store'}"]
    done = subprocess.run(pipeline, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 16 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("stele-bench: ") == 1
