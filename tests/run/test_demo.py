"""The main job: the bundled example suite end to end, in real containers with the real CLI, then verified."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from demo_runs import run_demo

REPO = Path(__file__).resolve().parents[2]
MEMORY_CHALLENGES = ("harbor-holds", "transaction-memo", "spreadsheet-export")
CONTROL_CHALLENGE = "rule-letter-case"


@pytest.fixture(scope="module")
def runs(local_demo: tuple[Path, dict[str, Any]]) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    tmp, first = local_demo  # the session's local run (tests/conftest.py), then a second run over it
    return tmp, first, run_demo(tmp)


def _cells(published: Path) -> dict[str, dict[str, Any]]:
    summary = json.loads((published / "receipts" / "statistics-summary.json").read_text())
    return {cell["key"]["challenge"]: cell for cell in summary["cells"]}


def test_the_demo_publishes_a_verified_bundle_and_reruns_nothing(
    runs: tuple[Path, dict[str, Any], dict[str, Any]],
) -> None:
    tmp, first, second = runs
    assert first["verified"] and first["executed_stages"] > 0
    assert {"paired-attempt", "certify", "calibrate", "grade", "publish"} <= set(first["stages"])
    assert second["verified"] and second["executed_stages"] == 0
    verify = subprocess.run(
        [sys.executable, "-m", "bench", "verify", str(tmp / "published" / "MANIFEST.json")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert verify.returncode == 0 and verify.stdout.strip() == "verified"
    assert (tmp / "published" / "report" / "index.html").is_file()


def test_memory_arrives_through_both_channels_and_helps_only_where_it_should(
    runs: tuple[Path, dict[str, Any], dict[str, Any]],
) -> None:
    cells = _cells(runs[0] / "published")
    for challenge in MEMORY_CHALLENGES:
        treatment, control = cells[challenge]["treatment"], cells[challenge]["control"]
        assert treatment["delivered_via"] == {"anchor-triggered-recall": 1, "prompt-time-retrieval": 1}, challenge
        assert control["delivered"] == 0 and control["delivered_via"] == {}
        assert (treatment["passes"], control["passes"]) == (1, 0), challenge
    control_cell = cells[CONTROL_CHALLENGE]
    assert control_cell["treatment"]["passes"] == control_cell["control"]["passes"] == 1
    assert control_cell["paired"]["treatment_only"] == control_cell["paired"]["control_only"] == 0
