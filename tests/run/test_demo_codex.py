"""The bundled example suite end to end under Codex CLI (`demo --harness codex`), from a fresh project: the real
CLI in its own agent image (each memory system's layer built on it) against the gateway's Responses dialect, every
arm graded through the same grading code, the bundle published and verified.

Delivery is credited through the memory-tool channel (server-memory and memory-keeper, MCP servers Codex starts)
and the static-context channel (static-notes' notes as ``~/.codex/AGENTS.md``), from the gateway's exchanges; the
report's first screen names the harness and its version.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from demo_runs import REPO, bench_command

pytestmark = pytest.mark.slow  # real containers, the real Codex CLI: many minutes

MEMORY_CHALLENGES = ("harbor-holds", "transaction-memo", "spreadsheet-export")
CHANNELS = {
    "server-memory@2026.8.31": "memory-tool-retrieval",
    "memory-keeper@0.14.1": "memory-tool-retrieval",
    "static-notes@1": "static-context",
}


@pytest.fixture(scope="module")
def codex_demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    project = tmp_path_factory.mktemp("codex-demo") / "project"
    made = bench_command(REPO, "init", str(project))
    assert made.returncode == 0, made.stderr
    done = bench_command(project, "--json", "demo", "--harness", "codex", "--attempts", "1", timeout=3600)
    assert done.returncode == 0, done.stderr[-4000:]
    (line,) = done.stdout.splitlines()
    return project / "published" / "example", json.loads(line)


def test_the_codex_demo_publishes_a_verified_bundle(codex_demo: tuple[Path, dict[str, Any]]) -> None:
    published, result = codex_demo
    assert result["verified"] and {"paired-attempt", "grade", "admit", "publish"} <= set(result["stages"])
    decisions = [json.loads(path.read_text()) for path in (published / "admissions").glob("*.json")]
    assert len(decisions) == 4 * 4 and {d["decision"] for d in decisions} == {"admitted"}


def test_the_report_names_codex_and_its_version_on_the_first_screen(codex_demo: tuple[Path, dict[str, Any]]) -> None:
    published, _ = codex_demo
    top = (published / "report" / "index.html").read_text().split("<section", 1)[0]
    assert "Codex CLI 0.169.0" in top and "Claude Code" not in top


def test_delivery_is_credited_through_mcp_and_static_context(codex_demo: tuple[Path, dict[str, Any]]) -> None:
    published, _ = codex_demo
    summary = json.loads((published / "receipts" / "statistics-summary.json").read_text())
    cells = {(cell["key"]["challenge"], cell["build"]["label"]): cell for cell in summary["cells"]}
    assert {cell["key"]["harness"] for cell in summary["cells"]} == {"codex"}
    assert {cell["key"]["model"] for cell in summary["cells"]} == {"gpt-5.5"}
    for challenge in MEMORY_CHALLENGES:
        for system, channel in CHANNELS.items():
            treatment, control = cells[challenge, system]["treatment"], cells[challenge, system]["control"]
            assert treatment["delivered_via"] == {channel: 1}, (challenge, system)
            assert control["delivered"] == 0 and control["delivered_via"] == {}
            assert (treatment["passes"], control["passes"]) == (1, 0), (challenge, system)
