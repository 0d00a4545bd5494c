"""Memory tools sealed from the model's credentials: what a system's MCP servers and hooks are started with.

The CLI starts a stdio MCP server, and runs a hook command, with its own environment added to the declared one, and
its own holds the model endpoint and the key the arm presents (:func:`bench.agent.claude.agent_env`). A memory
system given those can talk to the model on a channel no grade counts, and some switch into an LLM mode of their own
when they see them. So each server's command and each hook's command are rendered to start under ``env -i`` with
only the container's base environment (:data:`~bench.sandbox.layout.BASE_ENV`: home, locale, path, user) and what
the declaration names; a hook also keeps ``CLAUDE_PROJECT_DIR``, which its protocol documents. The replay of a
system's memory-tool calls starts its servers the same way, so both see the same environment.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from pydantic import JsonValue

from ..sandbox.layout import BASE_ENV
from ..suite.memory_system import McpServer

__all__ = ["HOOK_PASSED", "sealed_argv", "sealed_server", "sealed_settings"]

# The one variable of the CLI's own a hook keeps: the hook protocol documents it as the project's directory.
HOOK_PASSED = "CLAUDE_PROJECT_DIR"


def _assignments(declared: Mapping[str, str]) -> list[str]:
    return [f"{name}={value}" for name, value in sorted({**BASE_ENV, **declared}.items())]


def sealed_argv(command: str, args: tuple[str, ...], declared: Mapping[str, str]) -> list[str]:
    """``command args`` started with the base environment and ``declared`` alone."""
    return ["env", "-i", *_assignments(declared), command, *args]


def sealed_server(server: McpServer) -> dict[str, JsonValue]:
    """One MCP server as the user-level configuration lists it: its declared command, sealed."""
    command, *args = sealed_argv(server.command, server.args, server.env)
    return {"type": "stdio", "command": command, "args": list(args), "env": {}}


def _sealed_hook_command(command: str) -> str:
    passed = f'{HOOK_PASSED}="${HOOK_PASSED}"'  # expanded by the CLI's shell before the environment is cleared
    return " ".join(["env -i", *map(shlex.quote, _assignments({})), passed, "sh -c", shlex.quote(command)])


def sealed_settings(settings: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
    """``settings`` with every command hook's command sealed; everything else as declared."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return dict(settings)
    sealed: dict[str, JsonValue] = {}
    for event, groups in hooks.items():
        sealed[event] = [_sealed_group(group) for group in groups] if isinstance(groups, list) else groups
    return {**settings, "hooks": sealed}


def _sealed_group(group: JsonValue) -> JsonValue:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return group
    entries: list[JsonValue] = []
    for entry in group["hooks"]:  # type: ignore[union-attr]
        if isinstance(entry, dict) and entry.get("type") == "command" and isinstance(entry.get("command"), str):
            entry = {**entry, "command": _sealed_hook_command(str(entry["command"]))}
        entries.append(entry)
    return {**group, "hooks": entries}
