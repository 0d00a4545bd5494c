"""What the reference memory's treatment container gets, as its suite declaration states it.

Everything here is visible to the agent, so nothing names the harness, the condition or the experiment: the program
is :mod:`bench.memory.recall` copied under a neutral name, and the settings point at neutral paths. Restore writes
the program next to the project's ``state.sqlite`` and reports both as locations (``hook``, ``state``); the suite
mounts them read-only at :data:`HOOK_PATH` and :data:`STATE_PATH` and gives :func:`hook_settings` as the agent
user's settings.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

__all__ = [
    "HOOK_DIR",
    "HOOK_PATH",
    "POST_TOOL_MATCHER",
    "STATE_PATH",
    "hook_program",
    "hook_settings",
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
