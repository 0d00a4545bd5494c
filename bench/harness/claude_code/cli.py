"""The Claude Code CLI inside an arm container: its command line, its environment, where its session lands.

Facts from agent-interfaces.md: ``claude -p`` runs headless against ``ANTHROPIC_BASE_URL`` with any key, must run
as a non-root user to accept ``bypassPermissions``, resumes a native session with ``--resume ID``, and writes the
session to ``~/.claude/projects/<cwd with / replaced by ->/<session id>.jsonl``. The stream-json output names the
session id in every event; the first one found is taken.

Paths here are relative to the agent user's home (the runner joins them to it); absolute ones are system paths.
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath

__all__ = [
    "AGENT_KEY",
    "AUTO_MEMORY",
    "CLAUDE_DIR",
    "HOME_DIRS",
    "MANAGED_SETTINGS",
    "MANAGED_SETTINGS_PATH",
    "USER_MEMORY_PATH",
    "agent_env",
    "claude_argv",
    "session_file",
    "session_id_of",
]

# The stand-in key the agent presents. Identical in both arms (the environment may not differ between them);
# the gateway runs once per arm, so the key need not tell the arms apart.
AGENT_KEY = "sk-local-0000000000000000"
CLAUDE_DIR = PurePosixPath(".claude")
# The CLI's user-level memory file: it loads it by itself into the first message of every session. No arm has one
# unless a memory system mounts its state there (the static-context channel: the notes written down).
USER_MEMORY_PATH = CLAUDE_DIR / "CLAUDE.md"
# Made owned by the agent user before the container starts: a settings file mounted below it would otherwise
# make the engine create it root-owned, and the CLI could not write its sessions.
HOME_DIRS = (CLAUDE_DIR, CLAUDE_DIR / "projects")
# The CLI's managed settings on Linux: they take precedence over every user and project settings file, so an agent
# cannot turn back on what they turn off. Every arm gets them, read-only.
MANAGED_SETTINGS_PATH = PurePosixPath("/etc/claude-code/managed-settings.json")
# The CLI's built-in auto memory ("# auto memory" in every request's system prompt, notes under
# ~/.claude/projects/<slug>/memory/) is a rival memory system in every arm: off unless a memory system declares it
# as its condition (its settings say ``"autoMemoryEnabled": true``), which then replaces these in its own arm only.
AUTO_MEMORY = "autoMemoryEnabled"
MANAGED_SETTINGS: dict[str, object] = {AUTO_MEMORY: False}


def agent_env(base_url: str) -> dict[str, str]:
    """The environment every arm's container adds to the base one.

    ``MCP_CONNECTION_NONBLOCKING=0`` makes the CLI connect the configured MCP servers before its first request:
    by default it sends that request while they are still starting, and a server slower than the CLI (node on a
    busy machine) is missing from the first turn's tools in some runs and not others. Even then the CLI waits only
    ``MCP_CONNECT_TIMEOUT_MS`` (5 s by default) before it proceeds without them; under a load of 12 on two cores a
    server started 2 s late missed that deadline, so the wait is raised to the arm's own scale.
    """
    return {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": AGENT_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "MCP_CONNECTION_NONBLOCKING": "0",
        "MCP_CONNECT_TIMEOUT_MS": "120000",
    }


def claude_argv(prompt: str, model: str, resume: str | None = None) -> tuple[str, ...]:
    argv: tuple[str, ...] = ("claude", "-p", prompt, "--output-format", "stream-json", "--verbose")
    argv += ("--permission-mode", "bypassPermissions", "--model", model)
    return argv + (("--resume", resume) if resume else ())


def session_id_of(stream: bytes) -> str | None:
    """The session id the stream-json output names; None when the CLI printed no event."""
    for line in stream.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and isinstance(event.get("session_id"), str):
            return str(event["session_id"])
    return None


def session_file(session_id: str, cwd: str) -> PurePosixPath:
    return CLAUDE_DIR / "projects" / cwd.replace("/", "-") / f"{session_id}.jsonl"
