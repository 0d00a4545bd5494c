"""`status` of a finished demo (issue 39: what status computes per process was made cheaper, its answers must not
move): every invocation is up to date, by the very keys the demo stored, and a stage whose module is edited is
stale naming that module, what reads it waiting on it, the rest still up to date.

The edited copy is a checkout of its own (the package, the example's suite and manifests, the project marker) on
``PYTHONPATH``, so its bundled example is the demo's, byte for byte, but for the one module.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from demo_runs import REPO, DemoRuns

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes


def _status(project: Path, **env: str) -> dict[str, Any]:
    """`status --all` of the demo's plan (one attempt, as the demo ran it), with ``env`` over this environment."""
    command = [sys.executable, "-m", "bench", "--json", "status", "--attempts", "1", "--all"]
    environment = {name: value for name, value in os.environ.items() if not name.startswith("STELE_BENCH_")}
    done = subprocess.run(command, cwd=project, env=environment | env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def _edited_checkout(tmp_path: Path, module: str) -> Path:
    root = tmp_path / "edited"
    shutil.copytree(REPO / "bench", root / "bench", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("challenges", "manifests"):
        (root / name).symlink_to(REPO / name)
    shutil.copy(REPO / "stele-bench.toml", root / "stele-bench.toml")
    edited = root / module
    edited.write_text(edited.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
    return root


def test_a_finished_demo_is_up_to_date_and_an_edited_stage_is_stale_naming_its_module(
    demo_runs: DemoRuns, tmp_path: Path
) -> None:
    answer = _status(demo_runs.project)
    counts = answer["counts"]
    assert counts["stale"] == counts["waiting"] == 0 and counts["up to date"] == len(answer["invocations"]) > 0

    edited = _status(demo_runs.project, PYTHONPATH=str(_edited_checkout(tmp_path, "bench/stages/report.py")))
    by_status: dict[str, list[dict[str, Any]]] = {}
    for invocation in edited["invocations"]:
        by_status.setdefault(invocation["status"], []).append(invocation)
    (stale,) = by_status["stale"]
    assert stale["stage"] == "report" and stale["reasons"] == ["code changed: bench.stages.report"]
    assert {waiting["stage"] for waiting in by_status["waiting"]} == {"bundle", "publish"}
    assert len(by_status["up to date"]) == counts["up to date"] - 1 - len(by_status["waiting"])
