"""The hooks, fed JSON on stdin the way Claude Code feeds them, return the expected additionalContext.

The program runs as the agent's container runs it: the standalone file copied under a neutral name, on Debian's
python3 with no site packages, against a state file it may only read.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bench.memory import HOOK_PATH, STATE_PATH, hook_program, hook_settings
from bench.memory.notes import read_corpus
from bench.memory.recall import graph_hits
from bench.memory.state import build_state
from bench.provision import Provisioner, load_fixture, provisioned
from bench.suite.suite import load_suite

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "tests" / "provision" / "data" / "example-evidence"
DEBIAN_PYTHON = Path("/usr/bin/python3")
SESSION = {
    "session_id": "0d6c7a52-2b8e-4c1e-9a55-1f0e8e7c4b11",
    "transcript_path": "/home/dev/.claude/projects/-workspace/0d6c7a52-2b8e-4c1e-9a55-1f0e8e7c4b11.jsonl",
    "cwd": "/workspace",
    "permission_mode": "bypassPermissions",
}
HARNESS_WORDS = re.compile(r"stele|bench|treatment|control arm|experiment|fixture|condition", re.IGNORECASE)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The hook program and a state file laid out as in the container, the state read-only."""
    base = tmp_path_factory.mktemp("opt") / "recall"
    base.mkdir()
    state = base / "state.sqlite"
    build_state(state, read_corpus(EXAMPLE / "evidence"), EXAMPLE / "graphs" / "backfilled.json", None)
    state.chmod(0o444)
    hook = base / "hook.py"
    hook.write_bytes(hook_program())
    return hook, state


def _python() -> str:
    if not DEBIAN_PYTHON.is_file():
        pytest.fail(
            f"{DEBIAN_PYTHON} (Debian's python3, what agent containers run) is missing; apt-get install python3"
        )
    return str(DEBIAN_PYTHON)


def _fire(installed: tuple[Path, Path], event: str, payload: dict) -> subprocess.CompletedProcess[str]:
    hook, state = installed
    return subprocess.run(
        [_python(), "-I", str(hook), event, "--state", str(state)],
        input=json.dumps({**SESSION, **payload}),
        capture_output=True,
        text=True,
        check=False,
        cwd="/",
    )


def _context(done: subprocess.CompletedProcess[str], event_name: str) -> str:
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)
    assert set(output) == {"hookSpecificOutput"}
    assert set(output["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert output["hookSpecificOutput"]["hookEventName"] == event_name
    context: str = output["hookSpecificOutput"]["additionalContext"]
    assert len(context) < 10_000  # Claude Code truncates each entry there
    return context


def _post_tool(tool: str, file_path: str) -> dict:
    return {
        "hook_event_name": "PostToolUse",
        "tool_name": tool,
        "tool_input": {"file_path": file_path},
        "tool_response": {"filePath": file_path, "success": True},
        "tool_use_id": "toolu_01HXYZ",
    }


def test_prompt_time_retrieval(installed) -> None:
    prompt = "Retries keep hammering the payment gateway right after it recovers. Make the retry delays spread out."
    done = _fire(installed, "prompt", {"hook_event_name": "UserPromptSubmit", "prompt": prompt})
    context = _context(done, "UserPromptSubmit")
    assert context.startswith("<!-- recall:prompt -->")
    assert "adr/0001-retry-backoff.md" in context
    assert "decorrelated jitter" in context


def test_anchor_recall_on_read(installed) -> None:
    done = _fire(installed, "recall", _post_tool("Read", "/workspace/src/tinyq/codec.py"))
    context = _context(done, "PostToolUse")
    assert context.startswith("<!-- recall:anchor src/tinyq/codec.py -->")
    assert "notes/job-schema.md" in context
    assert "SCHEMA_VERSION" in context


@pytest.mark.parametrize("tool", ["Edit", "Write", "MultiEdit"])
def test_anchor_recall_on_edits_puts_direct_anchors_first(installed, tool: str) -> None:
    context = _context(_fire(installed, "recall", _post_tool(tool, "/workspace/src/tinyq/lease.py")), "PostToolUse")
    assert context.index("adr/0002-visibility-timeout.md") < context.index("issues/0042-duplicate-delivery.md")
    assert "broker's clock" in context


@pytest.mark.parametrize("path", ["/workspace/README.md", "/etc/passwd", "src/tinyq/elsewhere.py"])
def test_no_anchor_no_output(installed, path: str) -> None:
    done = _fire(installed, "recall", _post_tool("Read", path))
    assert (done.returncode, done.stdout) == (0, "")


def test_relative_file_path_resolves_against_the_event_cwd(installed) -> None:
    context = _context(_fire(installed, "recall", _post_tool("Read", "src/tinyq/codec.py")), "PostToolUse")
    assert "notes/job-schema.md" in context


def test_prompt_without_matching_words_gives_no_output(installed) -> None:
    done = _fire(installed, "prompt", {"hook_event_name": "UserPromptSubmit", "prompt": "hi"})
    assert (done.returncode, done.stdout) == (0, "")


def test_missing_state_is_a_reported_hook_error(tmp_path: Path) -> None:
    hook = tmp_path / "hook.py"
    hook.write_bytes(hook_program())
    done = _fire((hook, tmp_path / "absent.sqlite"), "prompt", {"prompt": "retry delays"})
    assert done.returncode == 1 and done.stdout == "" and "absent.sqlite" in done.stderr


def test_package_entry_point_runs_the_same_program(installed) -> None:
    _, state = installed
    done = subprocess.run(
        [sys.executable, "-m", "bench.memory.hooks", "recall", "--state", str(state)],
        input=json.dumps({**SESSION, **_post_tool("Read", "/workspace/src/tinyq/codec.py")}),
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert "notes/job-schema.md" in _context(done, "PostToolUse")


def test_directory_anchor_covers_files_below_it(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "store.md").write_text("# Store layout\n\nAnchors: src/store/\n\nObjects are packed.\n")
    graph = tmp_path / "graph.json"
    graph.write_text('{"nodes": [], "edges": []}')
    state = tmp_path / "state.sqlite"
    build_state(state, read_corpus(tmp_path / "notes"), graph, None)
    conn = sqlite3.connect(state)
    conn.row_factory = sqlite3.Row
    assert [hit[0] for hit in graph_hits(conn, "src/store/pack.py")] == ["store.md"]
    assert graph_hits(conn, "src/storefront.py") == []


def test_nothing_the_agent_sees_names_the_harness() -> None:
    assert HARNESS_WORDS.search(hook_program().decode()) is None
    assert HARNESS_WORDS.search(json.dumps(hook_settings())) is None


def test_settings_wire_both_hooks_to_neutral_paths() -> None:
    hooks = hook_settings()["hooks"]
    assert hooks["UserPromptSubmit"][0]["hooks"][0]["command"] == (
        "python3 /opt/recall/hook.py prompt --state /opt/recall/state.sqlite"
    )
    assert hooks["PostToolUse"][0]["matcher"] == "Read|Edit|Write|MultiEdit"
    assert hooks["PostToolUse"][0]["hooks"][0]["command"].endswith("recall --state /opt/recall/state.sqlite")


def test_hook_program_is_standard_library_only(installed, tmp_path: Path) -> None:
    # -I -S: no site-packages at all, as in a bare container
    hook, state = installed
    copy = tmp_path / "hook.py"
    shutil.copy(hook, copy)
    done = subprocess.run(
        [_python(), "-I", "-S", str(copy), "prompt", "--state", str(state)],
        input=json.dumps({**SESSION, "prompt": "jobs delivered twice after a clock step"}),
        capture_output=True,
        text=True,
        check=False,
    )
    assert "issues/0042-duplicate-delivery.md" in _context(done, "UserPromptSubmit")


def test_the_declared_attachment_mounts_what_restore_reported_and_it_runs(tmp_path: Path) -> None:
    """The example suite declares the reference memory's hooks (neutrally, the commands hook_settings gives) and
    mounts; restore reports both locations."""
    suite = REPO / "challenges" / "example"
    system = load_suite(suite).memory_system("reference")
    declared = {
        event: [(h.command, h.timeout_seconds) for h in hooks] for event, hooks in system.attachment.hooks.items()
    }
    wired = {
        event: [(entry["command"], entry["timeout"]) for group in groups for entry in group["hooks"]]
        for event, groups in hook_settings()["hooks"].items()
    }
    assert system.attachment.settings is None and declared == wired
    assert [str(tool) for tool in system.attachment.hooks["PostToolUse"][0].tools] == ["read", "edit", "write"]
    assert {m.location: m.target for m in system.attachment.mounts} == {
        "state": str(STATE_PATH),
        "hook": str(HOOK_PATH),
    }
    fixture = load_fixture(suite / "fixture")
    prefix = (sys.executable, "-m", "bench.memory", "--home", str(tmp_path))
    provisioner = Provisioner(prefix=prefix, fixture_root=suite / "fixture")

    async def restored_paths() -> dict[str, str]:
        async with provisioned(provisioner, fixture, "backfilled", "hooks.1") as session:
            assert session.restored.locations is not None
            paths = dict(session.restored.locations.paths)
            hook = (Path(paths["hook"]), Path(paths["state"]))
            assert "notes/household-spreadsheet.md" in _context(
                _fire(hook, "recall", _post_tool("Read", "tallybook/export.py")), "PostToolUse"
            )
            return paths

    paths = asyncio.run(restored_paths())
    assert set(paths) == {"state", "hook"} and not any(Path(path).exists() for path in paths.values())
