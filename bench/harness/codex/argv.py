"""Codex's command lines for a fresh and a resumed step, its environment, and the thread id its output names.

Both run from the workspace as the working directory (``exec resume`` has no ``-C``) with stdin ``/dev/null``:
given a prompt argument, the CLI still appends whatever stdin holds to the prompt. The flags, each verified
(docs/harnesses.md):

- ``--json``: one JSON event per line on stdout, the thread id in the first (``thread.started``);
- ``--skip-git-repo-check``: the workspace need not be a git repository the CLI trusts;
- ``--strict-config``: a misspelt configuration key ends the run instead of being ignored;
- ``--dangerously-bypass-approvals-and-sandbox``: the container is the sandbox; the CLI's own bwrap sandbox cannot
  create namespaces in a cap-dropped container and fails every command silently;
- ``--dangerously-bypass-hook-trust``: user hooks are otherwise untrusted and skipped without a trace.
"""

from __future__ import annotations

from ...contracts.strict_json import parse_json
from ...errors import ContractError

__all__ = ["AGENT_KEY", "KEY_VARIABLE", "agent_env", "codex_argv", "thread_id_of"]

# The stand-in key the agent presents, the same in every arm; the gateway never forwards it.
AGENT_KEY = "sk-local-0000000000000000"
KEY_VARIABLE = "MODEL_API_KEY"  # the provider's env_key: a plain name that says nothing about the experiment
_FLAGS = (
    "--json",
    "--skip-git-repo-check",
    "--strict-config",
    "--dangerously-bypass-approvals-and-sandbox",
    "--dangerously-bypass-hook-trust",
)


def agent_env() -> dict[str, str]:
    """The key the provider reads (``env_key``); the endpoint is in the configuration file, not the environment."""
    return {KEY_VARIABLE: AGENT_KEY}


def codex_argv(prompt: str, model: str, resume: str | None = None) -> tuple[str, ...]:
    """``codex exec`` for a fresh step, ``codex exec resume <thread id>`` to continue one; the prompt is last."""
    command = ("codex", "exec", "resume") if resume else ("codex", "exec")
    # "--" ends the options: a prompt that starts with "-" is still the prompt (verified for exec and exec resume).
    return (*command, *_FLAGS, "-m", model, "--", *((resume,) if resume else ()), prompt)


def thread_id_of(stream: bytes) -> str | None:
    """The thread id of the ``thread.started`` event; None when the CLI printed none (it failed to start)."""
    for line in stream.splitlines():
        try:
            event = parse_json(line, "a --json event")
        except ContractError:  # the CLI's stdout holds only events; a stray line is not one
            continue
        if isinstance(event, dict) and event.get("type") == "thread.started":
            thread = event.get("thread_id")
            return thread if isinstance(thread, str) else None
    return None
