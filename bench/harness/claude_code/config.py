"""A neutral attachment as Claude Code's user-level configuration: the files every arm gets, runner-owned.

The user-level configuration is where an agent could install a memory channel of its own (a hook in its settings,
an MCP server in its MCP configuration, notes in its instructions file, a skill or an agent type of its own), which
the CLI would load on the next step. So every arm gets each of them with the same shape: ``~/.claude/settings.json``
(the declared hooks, or ``{"hooks": {}}``), the user-level MCP configuration ``~/.claude.json`` (the declared
servers, or none), the user-level instructions file ``~/.claude/CLAUDE.md`` (empty unless declared) and the
``skills``, ``agents`` and ``commands`` directories (empty). Every server and hook command is sealed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

from ..base import AttachmentRequest, ConfigFile, HookSpec, McpServerSpec, RenderedConfig
from ..sealing import sealed_argv, sealed_hook_command
from .cli import AUTO_MEMORY, CLAUDE_DIR, MANAGED_SETTINGS, MANAGED_SETTINGS_PATH, USER_MEMORY_PATH

__all__ = [
    "HOOK_PASSED",
    "MCP_CONFIG_PATH",
    "SETTINGS_PATH",
    "USER_DIRS",
    "builtin_memory",
    "managed_files",
    "render",
    "sealed_settings",
    "settings_hooks",
]

SETTINGS_PATH = CLAUDE_DIR / "settings.json"
MCP_CONFIG_PATH = PurePosixPath(".claude.json")
# The user-level directories the CLI loads skills, agent types and commands from: each a channel an agent could
# fill in one step for the next.
USER_DIRS = ("skills", "agents", "commands")
# The one variable of the CLI's own a hook keeps: the hook protocol documents it as the project's directory.
HOOK_PASSED = "CLAUDE_PROJECT_DIR"


def _json(name: str, data: Mapping[str, Any], target: PurePosixPath) -> ConfigFile:
    content = (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8")
    return ConfigFile(name=name, target=target, content=content)


def _sealed_server(server: McpServerSpec, base: Mapping[str, str]) -> dict[str, Any]:
    command, *args = sealed_argv(server.command, server.args, server.env, base)
    return {"type": "stdio", "command": command, "args": list(args), "env": {}}


def _sealed_group(group: Any, base: Mapping[str, str]) -> Any:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return group
    entries: list[Any] = []
    for entry in group["hooks"]:
        if isinstance(entry, dict) and entry.get("type") == "command" and isinstance(entry.get("command"), str):
            entry = {**entry, "command": sealed_hook_command(str(entry["command"]), base, (HOOK_PASSED,))}
        entries.append(entry)
    return {**group, "hooks": entries}


def sealed_settings(settings: Mapping[str, Any], base: Mapping[str, str]) -> dict[str, Any]:
    """``settings`` (a ``settings.json``) with every command hook's command sealed; everything else as declared."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return dict(settings)
    sealed = {
        event: [_sealed_group(group, base) for group in groups] if isinstance(groups, list) else groups
        for event, groups in hooks.items()
    }
    return {**settings, "hooks": sealed}


def _hook_groups(hooks: Iterable[HookSpec]) -> dict[str, list[dict[str, Any]]]:
    """Neutral hooks in the settings file's shape: one group per event and matcher, in declaration order."""
    events: dict[str, list[dict[str, Any]]] = {}
    for hook in hooks:
        entry: dict[str, Any] = {"type": "command", "command": hook.command}
        if hook.timeout_seconds is not None:
            entry["timeout"] = hook.timeout_seconds
        groups = events.setdefault(str(hook.event), [])
        if groups and groups[-1].get("matcher") == hook.matcher:
            groups[-1]["hooks"].append(entry)
        else:
            groups.append({"hooks": [entry]} | ({} if hook.matcher is None else {"matcher": hook.matcher}))
    return events


def settings_hooks(settings: Mapping[str, Any] | None) -> tuple[HookSpec, ...]:
    """The command hooks a ``settings.json`` installs, as neutral hooks."""
    events = (settings or {}).get("hooks")
    found: list[HookSpec] = []
    for event, groups in events.items() if isinstance(events, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            if not isinstance(group, dict):
                continue
            matcher = group.get("matcher") if isinstance(group.get("matcher"), str) else None
            entries = group.get("hooks")
            for entry in entries if isinstance(entries, list) else ():
                command = entry.get("command") if isinstance(entry, dict) else None
                if not isinstance(command, str) or not command:
                    continue  # not a command hook: nothing of the memory system's runs
                timeout = entry.get("timeout")
                seconds = timeout if isinstance(timeout, int) and timeout > 0 else None
                found.append(HookSpec(event=event, matcher=matcher, command=command, timeout_seconds=seconds))
    return tuple(found)


def _settings(request: AttachmentRequest) -> dict[str, Any]:
    settings = sealed_settings(request.native_settings or {"hooks": {}}, request.base_env)
    if request.hooks:
        sealed = [
            hook.model_copy(update={"command": sealed_hook_command(hook.command, request.base_env, (HOOK_PASSED,))})
            for hook in request.hooks
        ]
        hooks = dict(settings.get("hooks") or {})
        for event, groups in _hook_groups(sealed).items():
            hooks[event] = [*hooks.get(event, []), *groups]
        settings["hooks"] = hooks
    if request.builtin_memory:
        settings[AUTO_MEMORY] = True
    return settings


def render(request: AttachmentRequest) -> RenderedConfig:
    """Every arm's user-level configuration from ``request`` (the control's: the empty request)."""
    servers = {server.name: _sealed_server(server, request.base_env) for server in request.mcp_servers}
    files = [
        _json("settings.json", _settings(request), SETTINGS_PATH),
        _json("mcp.json", {"mcpServers": dict(sorted(servers.items()))}, MCP_CONFIG_PATH),
        ConfigFile(name="CLAUDE.md", target=USER_MEMORY_PATH, content=request.instructions),
    ]
    files += [ConfigFile(name=name, target=CLAUDE_DIR / name, directory=True) for name in USER_DIRS]
    return RenderedConfig(files=tuple(files))


def builtin_memory(request: AttachmentRequest) -> bool:
    """Whether ``request`` declares the CLI's own auto memory: neutrally, or in its native settings."""
    return request.builtin_memory or (request.native_settings or {}).get(AUTO_MEMORY) is True


def managed_files(builtin: bool) -> tuple[ConfigFile, ...]:
    """The managed settings: auto memory off in every arm, on in the arm of a system declaring it."""
    settings = {AUTO_MEMORY: True} if builtin else MANAGED_SETTINGS
    content = (json.dumps(settings, sort_keys=True) + "\n").encode()
    return (ConfigFile(name="managed-settings.json", target=MANAGED_SETTINGS_PATH, content=content),)
