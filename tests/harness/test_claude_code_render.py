"""Claude Code renders the neutral attachment as the settings file the older, Claude-shaped declaration gave.

The bundled reference system still declares its hooks in Claude Code's ``settings`` form; the same hooks declared
per event in the neutral form must reach the CLI as the same bytes, and the arms of both must get the same files.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.agent.harness_files import container_path
from bench.agent.sealed_env import attachment_request, installed_hooks, needed_channels
from bench.harness import MemoryChannel, harness_named
from bench.harness.claude_code.config import SETTINGS_PATH
from bench.suite.memory_system import Attachment, Hook
from bench.suite.suite import load_suite

CLAUDE = harness_named("claude-code")
EXAMPLE = Path(__file__).resolve().parents[2] / "challenges" / "example"


def _neutral(legacy: Attachment) -> Attachment:
    """``legacy``'s settings hooks declared per event instead."""
    assert legacy.settings is not None
    events = legacy.settings["hooks"]
    assert isinstance(events, dict)
    hooks: dict[str, tuple[Hook, ...]] = {}
    for event, groups in events.items():
        assert isinstance(groups, list)
        hooks[event] = tuple(
            Hook(command=entry["command"], matcher=group.get("matcher"), timeout_seconds=entry.get("timeout"))  # type: ignore[union-attr, index, arg-type]
            for group in groups
            for entry in group["hooks"]  # type: ignore[index, call-overload, union-attr]
        )
    return legacy.model_copy(update={"settings": None, "hooks": hooks})


def test_neutral_hooks_render_the_bytes_the_settings_form_did() -> None:
    legacy = load_suite(EXAMPLE).memory_system("reference").attachment
    neutral = _neutral(legacy)
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


def test_a_declaration_in_the_neutral_form_keeps_its_digest_while_it_uses_no_new_field() -> None:
    legacy = load_suite(EXAMPLE).memory_system("reference")
    dumped = legacy.attachment.model_dump(mode="json")
    assert "hooks" not in dumped and "builtin_memory" not in dumped
    assert "hooks" in _neutral(legacy.attachment).model_dump(mode="json")


def test_a_neutral_instructions_file_is_placed_where_the_harness_reads_it() -> None:
    """The bundled static-notes system mounts its notes at Claude Code's path; declared neutrally, the runner puts
    them there itself, and the arm gets the same mount."""
    bundled = load_suite(EXAMPLE).memory_system("static-notes")
    (mount,) = bundled.attachment.mounts
    neutral = bundled.model_copy(
        update={"attachment": bundled.attachment.model_copy(update={"mounts": (), "instructions": mount.location})}
    )
    assert "instructions" in neutral.attachment.model_dump(mode="json") and neutral.digest != bundled.digest
    placed = neutral.placed(str(container_path(CLAUDE.instructions_path)))
    assert placed.attachment == bundled.attachment
    assert needed_channels(CLAUDE, neutral.attachment) == {MemoryChannel.INSTRUCTIONS_FILE}
    assert bundled.placed("/elsewhere") == bundled  # a system without one is run as declared: its keys unchanged
