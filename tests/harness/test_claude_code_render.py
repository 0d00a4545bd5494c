"""The example's systems in neutral terms reach Claude Code as the older, Claude-shaped declarations did, and Codex
CLI in its own names.

The bundled reference system declares its hooks per event with neutral tool kinds (``read``, ``edit``, ``write``);
under Claude Code they must reach the CLI as the bytes the older ``settings`` form gave (with the matcher naming the
same tools), and under Codex as its own tool names. The bundled static-notes system declares its notes as the
instructions file: each harness mounts them where it reads that file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.agent.harness_files import container_path
from bench.agent.sealed_env import attachment_request, installed_hooks, needed_channels
from bench.harness import HookTool, MemoryChannel, harness_named
from bench.harness.claude_code.config import SETTINGS_PATH
from bench.suite.memory_system import Attachment, Hook, StateMount
from bench.suite.suite import load_suite

CLAUDE = harness_named("claude-code")
CODEX = harness_named("codex")
EXAMPLE = Path(__file__).resolve().parents[2] / "challenges" / "example"
_HOOK = "python3 /opt/recall/hook.py {} --state /opt/recall/state.sqlite"


def _settings(matcher: str) -> dict[str, Any]:
    """The reference system's hooks in the older settings form, as the example declared them before."""
    entry = {"type": "command", "timeout": 30}
    return {
        "hooks": {
            "UserPromptSubmit": [{"hooks": [{**entry, "command": _HOOK.format("prompt")}]}],
            "PostToolUse": [{"matcher": matcher, "hooks": [{**entry, "command": _HOOK.format("recall")}]}],
        }
    }


def test_neutral_hooks_render_the_bytes_the_settings_form_did() -> None:
    neutral = load_suite(EXAMPLE).memory_system("reference").attachment
    assert neutral.settings is None and neutral.hooks
    legacy = neutral.model_copy(update={"settings": _settings("Read|Edit|MultiEdit|Write"), "hooks": {}})
    old, new = CLAUDE.render(attachment_request(legacy)), CLAUDE.render(attachment_request(neutral))
    assert old == new
    settings = json.loads(new.by_target()[SETTINGS_PATH].content)
    assert set(settings["hooks"]) == {"UserPromptSubmit", "PostToolUse"}
    assert all(
        entry["command"].startswith("env -i ")
        for groups in settings["hooks"].values()
        for g in groups
        for entry in g["hooks"]
    )
    assert installed_hooks(CLAUDE, legacy) == installed_hooks(CLAUDE, neutral)


def test_each_harness_renders_the_neutral_tool_kinds_as_its_own_tool_names() -> None:
    neutral = load_suite(EXAMPLE).memory_system("reference").attachment
    matchers = {
        harness.name: [hook.matcher for hook in installed_hooks(harness, neutral)] for harness in (CLAUDE, CODEX)
    }
    assert matchers == {"claude-code": [None, "Read|Edit|MultiEdit|Write"], "codex": [None, "Bash|apply_patch"]}
    hooks = json.loads(
        CODEX.render(attachment_request(neutral)).by_target()[CODEX.instructions_path.parent / "hooks.json"].content
    )
    assert hooks["hooks"]["PostToolUse"][0]["matcher"] == "Bash|apply_patch"


def _hook(**declared: object) -> Hook:
    return Hook.model_validate_json(json.dumps({"command": "x", **declared}))


def test_a_hook_picks_its_tools_one_way() -> None:
    assert _hook(tools=["read", "shell"]).tools == (HookTool.READ, HookTool.SHELL)
    with pytest.raises(ValueError, match=r"by `tools` \(neutral words\) or by `matcher`, not both"):
        _hook(matcher="Read", tools=["read"])
    with pytest.raises(ValueError, match="names a tool kind twice"):
        _hook(tools=["read", "read"])
    with pytest.raises(ValueError, match=r"tools\.0"):
        _hook(tools=["Read"])  # a harness's own name is not a tool kind


def test_a_declaration_keeps_its_digest_while_it_uses_no_new_field() -> None:
    hook = Hook(command="x", matcher="Read")
    assert hook.model_dump(mode="json") == {"command": "x", "matcher": "Read", "timeout_seconds": None}
    legacy = Attachment(settings=_settings("Read"), mounts=(StateMount(location="state", target="/opt/s"),))
    dumped = legacy.model_dump(mode="json")
    assert "hooks" not in dumped and "builtin_memory" not in dumped and "instructions" not in dumped


def test_a_neutral_instructions_file_is_placed_where_the_harness_reads_it() -> None:
    """The bundled static-notes system declares its notes as the instructions file: under Claude Code the arm gets
    the mount it had when the declaration named Claude Code's path, under Codex its own path."""
    bundled = load_suite(EXAMPLE).memory_system("static-notes")
    assert bundled.attachment.instructions == "notes" and not bundled.attachment.mounts
    for harness, target in ((CLAUDE, "/home/dev/.claude/CLAUDE.md"), (CODEX, "/home/dev/.codex/AGENTS.md")):
        placed = bundled.placed(str(container_path(harness.instructions_path)))
        assert placed.attachment.mounts == (StateMount(location="notes", target=target),)
        assert needed_channels(harness, bundled.attachment) == {MemoryChannel.INSTRUCTIONS_FILE}
    reference = load_suite(EXAMPLE).memory_system("reference")
    assert reference.placed("/elsewhere") == reference  # a system without one is run as declared: its keys unchanged


def test_each_file_loaded_in_one_reminder_runs_to_the_next_header_and_the_last_to_the_end() -> None:
    injection = harness_named("claude-code").injection
    text = (
        "<system-reminder>\nContents of /home/dev/.claude/CLAUDE.md (user's private global instructions):\n\n"
        "first notes\nContents of nothing: no path, not a header\n\n"
        "Contents of /w/CLAUDE.md (project instructions, checked into the codebase):\n\nsecond notes\n"
        "</system-reminder>\n"
    )
    for _ in range(2):  # read again: the same answer
        loaded = injection.loaded_files(text)
        assert [(file.path, file.text.strip()) for file in loaded] == [
            ("/home/dev/.claude/CLAUDE.md", "first notes\nContents of nothing: no path, not a header"),
            ("/w/CLAUDE.md", "second notes"),
        ]
    assert injection.loaded_files("<system-reminder>\nno file here\n</system-reminder>") == ()
