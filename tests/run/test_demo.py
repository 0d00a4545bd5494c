"""The main job: the bundled example suite end to end, in real containers with the real CLI, then verified.

Three conditions per challenge: the shared control, the reference memory (hooks) and server-memory (an npm MCP
server in its own image layer), each memory system its own cell beside the other."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from demo_runs import run_demo

from bench.agent import PairRecord
from bench.sandbox.spec import SpecDiffReceipt
from bench.store import Store
from bench.store.actions import ActionKey, recorded_from

REPO = Path(__file__).resolve().parents[2]
MEMORY_CHALLENGES = ("harbor-holds", "transaction-memo", "spreadsheet-export")
CONTROL_CHALLENGE = "rule-letter-case"


@pytest.fixture(scope="module")
def runs(local_demo: tuple[Path, dict[str, Any]]) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    tmp, first = local_demo  # the session's local run (tests/conftest.py), then a second run over it
    return tmp, first, run_demo(tmp)


REFERENCE, SERVER_MEMORY = "reference@1", "server-memory@2026.8.31"
SYSTEMS = ("reference", "server-memory")


def _cells(published: Path) -> dict[tuple[str, str], dict[str, Any]]:
    summary = json.loads((published / "receipts" / "statistics-summary.json").read_text())
    return {(cell["key"]["challenge"], cell["build"]["label"]): cell for cell in summary["cells"]}


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


CHANNELS = {
    REFERENCE: {"anchor-triggered-recall": 1, "prompt-time-retrieval": 1},
    SERVER_MEMORY: {"memory-tool-retrieval": 1},
}


@pytest.mark.parametrize("system", [REFERENCE, SERVER_MEMORY])
def test_each_system_delivers_through_its_own_channels_and_helps_only_where_it_should(
    runs: tuple[Path, dict[str, Any], dict[str, Any]], system: str
) -> None:
    cells = _cells(runs[0] / "published")
    assert {label for _, label in cells} == {REFERENCE, SERVER_MEMORY}
    for challenge in MEMORY_CHALLENGES:
        treatment, control = cells[challenge, system]["treatment"], cells[challenge, system]["control"]
        assert treatment["delivered_via"] == CHANNELS[system], challenge
        assert treatment["used"] == 1, challenge
        assert control["delivered"] == 0 and control["delivered_via"] == {}
        assert (treatment["passes"], control["passes"]) == (1, 0), challenge
    control_cell = cells[CONTROL_CHALLENGE, system]
    assert control_cell["treatment"]["passes"] == control_cell["control"]["passes"] == 1
    assert control_cell["paired"]["treatment_only"] == control_cell["paired"]["control_only"] == 0
    assert all(cell["tokens"]["status"] == "not-tested" for cell in cells.values())


def test_the_report_says_the_model_was_a_stand_in_and_shows_both_systems(
    runs: tuple[Path, dict[str, Any], dict[str, Any]],
) -> None:
    report = (runs[0] / "published" / "report" / "index.html").read_text()
    top = report.split("<section", 1)[0]
    assert "The model was a deterministic stand-in" in top
    assert REFERENCE in report and SERVER_MEMORY in report and "memory-tool-retrieval" in report


def test_every_pair_differs_from_the_shared_control_only_in_its_attachment_image_layer_included(
    runs: tuple[Path, dict[str, Any], dict[str, Any]],
) -> None:
    store = Store(runs[0] / "store")
    attempts = [
        result
        for result in recorded_from(store, 0)
        if store.get_document(result.key, ActionKey).stage == "paired-attempt"
    ]
    assert len(attempts) == 4  # one attempt of each challenge
    for result in attempts:
        pairs = {name: store.get_document(result.outputs[f"pairs/{name}"], PairRecord) for name in SYSTEMS}
        assert {pair.arms[pair.order.index("control") > pair.order.index(name)] for name, pair in pairs.items()} == {
            result.outputs["control"]
        }  # both pairs hold the one control arm
        diffs = {name: store.get_document(pair.spec_diff, SpecDiffReceipt) for name, pair in pairs.items()}
        assert all(diff.only_attachment for diff in diffs.values())
        layered = {d.field: d.second for d in diffs["server-memory"].differences}
        assert str(layered["attachment.image_id"]).startswith("sha256:")
        assert "attachment.image_id" not in {d.field for d in diffs["reference"].differences}
