"""Keys cover every byte that decides a result, and nothing observed: the example suite run in a fresh store of
another project makes the very keys the session's demo made, and editing a memory system's provisioner makes
exactly its attempts stale (`status` says which part changed), `run` refuses until it is re-pinned, and the rerun
runs those attempts and what reads them, nothing upstream.

The project holds a copy of the example at the path the demo plans it (``challenges/example``), so its plan is the
demo's, param for param. One module fixture makes the fresh run (minutes: every pair in containers).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from action_keys import keys_by_provenance, literal_keys, store_actions
from demo_runs import REPO, DemoRuns, bench_command

from bench.store import Store

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

SUITE = "challenges/example"
# Stages whose every input is decided in the example (observed stages' outputs there are deterministic trees): their
# keys are equal digest for digest. The rest read an agent's records, which no two real runs share byte for byte.
# verify and audit read an arm's final tree, which is observed: an agent that edits a module and imports it leaves
# bytecode stamped with the edit's time (the example's rule-letter-case policy runs the tests), so their keys are
# equal by provenance, not digest for digest.
LITERAL = {"corpus", "redact", "certify", "prebuild", "calibrate", "paired-attempt"}
UPSTREAM = {"corpus", "redact", "certify", "prebuild", "calibrate"}


@dataclass(frozen=True)
class Fresh:
    project: Path
    first: dict[str, Any]


def _json(cwd: Path, *argv: str, timeout: float = 300) -> tuple[int, dict[str, Any], str]:
    done = bench_command(cwd, "--json", *argv, timeout=timeout)
    lines = done.stdout.splitlines()
    assert len(lines) == 1, (done.stdout, done.stderr[-3000:])
    return done.returncode, json.loads(lines[0]), done.stderr


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Fresh:
    project = tmp_path_factory.mktemp("keys") / "project"
    assert bench_command(REPO, "init", str(project)).returncode == 0
    shutil.copytree(REPO / SUITE, project / SUITE)
    shutil.copytree(REPO / "manifests" / "example", project / "manifests" / "example")
    code, first, err = _json(project, "run", SUITE, "--attempts", "1", timeout=1800)
    assert code == 0 and first["verified"], err[-4000:]
    return Fresh(project, first)


def test_a_fresh_store_makes_the_demos_keys_for_every_stage(fresh: Fresh, demo_runs: DemoRuns) -> None:
    ours, theirs = store_actions(Store(fresh.project / "store")), store_actions(Store(demo_runs.store))
    assert fresh.first["executed_stages"] == len(ours), "a fresh store: every action ran here"
    literal, demo = literal_keys(ours), literal_keys(theirs)
    assert literal.keys() == demo.keys() and literal.keys() >= LITERAL
    for stage in sorted(LITERAL):
        assert literal[stage] == demo[stage], stage
    by_provenance, demo_by_provenance = keys_by_provenance(ours), keys_by_provenance(theirs)
    for stage, keys in demo_by_provenance.items():
        assert by_provenance[stage] == keys, stage


def _copied_bench(tmp_path: Path) -> Path:
    """A copy of the bench package whose reference memory's hook program (mounted into its arms) is edited."""
    root = tmp_path / "edited"
    shutil.copytree(REPO / "bench", root / "bench", ignore=shutil.ignore_patterns("__pycache__", "_example"))
    recall = root / "bench" / "memory" / "recall.py"
    recall.write_text(recall.read_text() + "\n# an edit of the hook program\n")
    return root


def _stale(project: Path, **env: str) -> list[dict[str, Any]]:
    """What `status` lists as stale (with ``env`` over this process's environment, less what names a store)."""
    command = [sys.executable, "-m", "bench", "--json", "status", SUITE, "--attempts", "1"]
    environment = {name: value for name, value in os.environ.items() if not name.startswith("STELE_BENCH_")}
    done = subprocess.run(command, cwd=project, env=environment | env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    invocations: list[dict[str, Any]] = json.loads(done.stdout)["invocations"]
    return invocations


def test_an_edited_provisioner_stales_exactly_its_attempts_and_the_rerun_runs_them_only(
    fresh: Fresh, tmp_path: Path
) -> None:
    project = fresh.project
    assert _stale(project) == [], "nothing is stale after the run"

    hooked = _stale(project, PYTHONPATH=str(_copied_bench(tmp_path)))
    assert {entry["stage"] for entry in hooked} == {"paired-attempt"} and len(hooked) == 4
    for entry in hooked:
        assert entry["reasons"] == ["provisioner reference: code changed (module bench.memory.recall)"]

    provision = project / SUITE / "systems" / "static-notes" / "provision"
    provision.write_text(provision.read_text() + "# an edit of the provisioner\n")
    stale = _stale(project)
    assert {entry["stage"] for entry in stale} == {"paired-attempt"} and len(stale) == 4
    for entry in stale:
        assert entry["reasons"] == ["provisioner static-notes: code changed (executable)"]

    code, refused, err = _json(project, "run", SUITE, "--attempts", "1")
    assert code == 6 and refused["error"]["field"] == "code_sha256", err
    assert f"stele-bench pin {SUITE}" in refused["error"]["hint"]
    code, pinned, err = _json(project, "pin", SUITE)
    assert code == 0 and pinned["written"], err
    code, rerun, err = _json(project, "run", SUITE, "--attempts", "1", timeout=1800)
    assert code == 0 and rerun["verified"], err[-4000:]
    assert "paired-attempt" in rerun["stages"] and not UPSTREAM & set(rerun["stages"]), rerun["stages"]
    assert rerun["executed_stages"] < fresh.first["executed_stages"]
