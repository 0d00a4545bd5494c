"""A harness-neutral attachment rendered into the files Codex reads from ``$CODEX_HOME``: ``config.toml``,
``AGENTS.md`` and ``hooks.json``, written by the runner, the same bytes for the same inputs.

What the configuration pins, and why (each verified against the CLI, docs/harnesses.md):

- the model provider ``gw``: the gateway, its key read from an environment variable (``env_key``), the Responses
  wire API. Its name is not "OpenAI", which would switch on remote compaction;
- ``web_search = "disabled"``: a hosted tool the gateway cannot serve;
- ``features.plugins = false`` and ``analytics.enabled = false``: the curated-plugin sync (git ls-remote, DNS) and
  the metrics exporter are the CLI's only outside traffic; ``features.memories = false``: the CLI's own memory is a
  rival memory system, off in every arm alike;
- ``shell_environment_policy.inherit = "core"``: the agent's commands do not see the gateway key in ``env``;
- each MCP server ``required = true``: a server that fails to start ends the run (exit 1) instead of being silently
  absent, and it gets exactly the environment the declaration names (the CLI passes only HOME, LC_CTYPE and PATH).

Nothing here names the harness's purpose, an arm or the experiment: the agent can read every one of these files.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from pathlib import PurePosixPath

from pydantic import Field, field_validator

from ...contracts import ContractModel
from ...sandbox.layout import USER_HOME
from .toml_text import TomlTable, toml_document

__all__ = [
    "CODEX_HOME",
    "CONFIG_FILE",
    "HOOKS_FILE",
    "INSTRUCTIONS_FILE",
    "PROVIDER",
    "CodexSetup",
    "HookCommand",
    "HookEvent",
    "McpServer",
    "render_files",
]

CODEX_HOME = PurePosixPath(USER_HOME) / ".codex"  # the CLI's default, so no CODEX_HOME variable is needed
CONFIG_FILE = "config.toml"
HOOKS_FILE = "hooks.json"
INSTRUCTIONS_FILE = "AGENTS.md"  # the user-level instructions file, loaded into every session's first message
PROVIDER = "gw"
MCP_STARTUP_SECONDS = 120  # a node server on a loaded two-core machine needs more than the CLI's default 10 s
_NAME = re.compile(r"[A-Za-z0-9_-]+")


class HookEvent(StrEnum):
    SESSION_START = "SessionStart"
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    PRE_TOOL_USE = "PreToolUse"
    POST_TOOL_USE = "PostToolUse"
    STOP = "Stop"


class McpServer(ContractModel):
    name: str
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _plain_name(cls, name: str) -> str:
        # The name becomes a TOML table key and the model's namespace `mcp__<name>`.
        if not _NAME.fullmatch(name):
            raise ValueError(f"MCP server name {name!r} must be letters, digits, '_' or '-'")
        return name


class HookCommand(ContractModel):
    event: HookEvent
    command: str
    matcher: str | None = None
    timeout_seconds: int = Field(default=30, gt=0)


class CodexSetup(ContractModel):
    """Everything the files depend on: the gateway, the model slug, and the memory system's attachment."""

    model: str
    base_url: str
    key_variable: str
    instructions: str | None = None
    servers: tuple[McpServer, ...] = ()
    hooks: tuple[HookCommand, ...] = ()


def _config(setup: CodexSetup) -> str:
    top: TomlTable = {"model": setup.model, "model_provider": PROVIDER, "web_search": "disabled"}
    provider: TomlTable = {
        "name": PROVIDER,
        "base_url": setup.base_url,
        "env_key": setup.key_variable,
        "wire_api": "responses",
    }
    tables: list[tuple[tuple[str, ...], TomlTable]] = [
        (("model_providers", PROVIDER), provider),
        (("features",), {"plugins": False, "memories": False}),
        (("analytics",), {"enabled": False}),
        (("shell_environment_policy",), {"inherit": "core"}),
    ]
    for server in sorted(setup.servers, key=lambda server: server.name):
        table: TomlTable = {
            "command": server.command,
            "args": server.args,
            "env": server.env,
            "required": True,
            "startup_timeout_sec": MCP_STARTUP_SECONDS,
        }
        tables.append((("mcp_servers", server.name), table))
    return toml_document(top, tables)


def _hooks(hooks: tuple[HookCommand, ...]) -> str:
    events: dict[str, list[dict[str, object]]] = {}
    for hook in hooks:
        group: dict[str, object] = {
            "hooks": [{"type": "command", "command": hook.command, "timeout": hook.timeout_seconds}]
        }
        if hook.matcher is not None:
            group["matcher"] = hook.matcher
        events.setdefault(hook.event.value, []).append(group)
    return json.dumps({"hooks": events}, indent=2, sort_keys=True) + "\n"


def render_files(setup: CodexSetup) -> dict[str, bytes]:
    """The files to write under :data:`CODEX_HOME`, by name; hooks and instructions only when there are some."""
    files = {CONFIG_FILE: _config(setup).encode()}
    if setup.hooks:
        files[HOOKS_FILE] = _hooks(setup.hooks).encode()
    if setup.instructions is not None:
        files[INSTRUCTIONS_FILE] = setup.instructions.encode()
    return files
