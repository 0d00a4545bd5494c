"""A harness-neutral attachment rendered into the files Codex reads from ``$CODEX_HOME`` (``~/.codex``):
``config.toml``, ``AGENTS.md`` and ``hooks.json``, runner-owned and the same set in every arm (only contents
differ), the same bytes for the same request.

What the configuration pins, and why (each verified against the CLI, docs/harnesses.md):

- the model provider ``gw``: the gateway, its key read from an environment variable (``env_key``), the Responses
  wire API. Its name is not "OpenAI", which would switch on remote compaction;
- ``web_search = "disabled"``: a hosted tool the gateway cannot serve;
- ``features.plugins = false`` and ``analytics.enabled = false``: the curated-plugin sync (git ls-remote, DNS) and
  the metrics exporter are the CLI's only outside traffic; ``features.memories = false``: the CLI's own memory is a
  rival memory system, off in every arm alike;
- ``shell_environment_policy.inherit = "core"``: the agent's commands do not see the gateway key in ``env``;
- each MCP server ``required = true``: a server that fails to start ends the run (exit 1) instead of being silently
  absent. The CLI passes a server only HOME, LANG, PATH and USER besides its ``env`` table; a hook, though, inherits
  the CLI's whole environment (the key included), so both are sealed (:mod:`..sealing`) like every harness's.

Nothing here names the harness's purpose, an arm or the experiment: the agent can read every one of these files.
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath

from ..base import AttachmentRequest, ConfigFile, RenderedConfig
from ..sealing import sealed_argv, sealed_hook_command
from .argv import KEY_VARIABLE
from .toml_text import TomlTable, toml_document

__all__ = ["CODEX_HOME", "INSTRUCTIONS_PATH", "PROVIDER", "SKILLS_DIR", "render"]

CODEX_HOME = PurePosixPath(".codex")  # the CLI's default under the home, so no CODEX_HOME variable is needed
INSTRUCTIONS_PATH = CODEX_HOME / "AGENTS.md"  # user-level instructions, loaded into every session's first message
SKILLS_DIR = PurePosixPath(".agents") / "skills"  # user-level skills the CLI lists for the model: kept empty
PROVIDER = "gw"
MCP_STARTUP_SECONDS = 120  # a node server on a loaded two-core machine needs more than the CLI's default 10 s


def _config(request: AttachmentRequest) -> str:
    top: TomlTable = {"model_provider": PROVIDER, "web_search": "disabled"}
    provider: TomlTable = {
        "name": PROVIDER,
        "base_url": f"{request.base_url}/v1",
        "env_key": KEY_VARIABLE,
        "wire_api": "responses",
    }
    tables: list[tuple[tuple[str, ...], TomlTable]] = [
        (("model_providers", PROVIDER), provider),
        (("features",), {"plugins": False, "memories": False}),
        (("analytics",), {"enabled": False}),
        (("shell_environment_policy",), {"inherit": "core"}),
    ]
    for server in sorted(request.mcp_servers, key=lambda server: server.name):
        command, *args = sealed_argv(server.command, server.args, server.env, request.base_env)
        table: TomlTable = {
            "command": command,
            "args": tuple(args),
            "required": True,
            "startup_timeout_sec": MCP_STARTUP_SECONDS,
        }
        tables.append((("mcp_servers", server.name), table))
    return toml_document(top, tables)


def _hooks(request: AttachmentRequest) -> str:
    """Hooks in the CLI's ``hooks.json`` (Claude Code's schema): one group per hook, in declaration order."""
    events: dict[str, list[dict[str, object]]] = {}
    for hook in request.hooks:
        entry: dict[str, object] = {
            "type": "command",
            "command": sealed_hook_command(hook.command, request.base_env, ()),
        }
        if hook.timeout_seconds is not None:
            entry["timeout"] = hook.timeout_seconds
        group: dict[str, object] = {"hooks": [entry]}
        if hook.matcher is not None:
            group["matcher"] = hook.matcher
        events.setdefault(str(hook.event), []).append(group)
    return json.dumps({"hooks": events}, indent=2, sort_keys=True) + "\n"


def render(request: AttachmentRequest) -> RenderedConfig:
    """Every arm's Codex configuration from ``request`` (the control's: the empty request)."""
    files = (
        ConfigFile(name="config.toml", target=CODEX_HOME / "config.toml", content=_config(request).encode()),
        ConfigFile(name="hooks.json", target=CODEX_HOME / "hooks.json", content=_hooks(request).encode()),
        ConfigFile(name="AGENTS.md", target=INSTRUCTIONS_PATH, content=request.instructions),
        # Files the CLI reads that an agent could otherwise write for its next step: a non-empty override replaces
        # AGENTS.md (an empty one is ignored), and .env sets the CLI's environment. Both empty and read-only.
        ConfigFile(name="AGENTS.override.md", target=CODEX_HOME / "AGENTS.override.md"),
        ConfigFile(name="env", target=CODEX_HOME / ".env"),
        ConfigFile(name="skills", target=SKILLS_DIR, directory=True),
    )
    return RenderedConfig(files=files)
