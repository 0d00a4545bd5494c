"""What the runner puts into the memory condition's container so the agent's hooks can read the restored state.

Everything here is visible to the agent, so nothing names the harness, the condition or the experiment: the program
is :mod:`bench.memory.recall` copied under a neutral name, and the settings point at neutral paths. Mount the
project's ``state.sqlite`` (:func:`bench.memory.provisioner.state_path`) read-only at :data:`STATE_PATH`.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any

__all__ = [
    "HOOK_DIR",
    "HOOK_PATH",
    "POST_TOOL_MATCHER",
    "STATE_PATH",
    "hook_program",
    "hook_settings",
    "stage_attachment",
]

HOOK_DIR = PurePosixPath("/opt/recall")
HOOK_PATH = HOOK_DIR / "hook.py"
STATE_PATH = HOOK_DIR / "state.sqlite"
POST_TOOL_MATCHER = "Read|Edit|Write|MultiEdit"
_TIMEOUT_SECONDS = 30


def hook_program() -> bytes:
    """The standalone hook program's bytes (standard library only; runs on the container's python3)."""
    return Path(__file__).with_name("recall.py").read_bytes()


def hook_settings(
    hook_path: PurePosixPath = HOOK_PATH, state_path: PurePosixPath = STATE_PATH, python: str = "python3"
) -> dict[str, Any]:
    """The ``hooks`` section of a Claude Code ``settings.json`` for prompt-time retrieval and anchor recall."""

    def command(event: str) -> dict[str, Any]:
        return {
            "type": "command",
            "command": f"{python} {hook_path} {event} --state {state_path}",
            "timeout": _TIMEOUT_SECONDS,
        }

    return {
        "hooks": {
            "UserPromptSubmit": [{"hooks": [command("prompt")]}],
            "PostToolUse": [{"matcher": POST_TOOL_MATCHER, "hooks": [command("recall")]}],
        }
    }


def stage_attachment(
    directory: Path, state: Path, settings_path: PurePosixPath
) -> tuple[tuple[Path, PurePosixPath], ...]:
    """Write the hook program and a settings file into runner-owned ``directory``; return read-only mounts.

    Each pair is (host path, container path): the restored state, the hook program and a Claude Code settings file
    to mount at ``settings_path`` (for example the agent user's ``~/.claude/settings.json``).
    """
    if not state.is_file():
        raise FileNotFoundError(f"restored state {state} does not exist; restore the project first")
    directory.mkdir(parents=True, exist_ok=True)
    program = directory / "hook.py"
    program.write_bytes(hook_program())
    settings = directory / "settings.json"
    settings.write_text(json.dumps(hook_settings(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return ((state, STATE_PATH), (program, HOOK_PATH), (settings, settings_path))
