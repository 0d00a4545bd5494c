"""Memory tools sealed from the model's credentials: a command rewritten to start under ``env -i``.

A harness starts a stdio MCP server, and runs a hook command, with its own environment added to the declared one,
and its own holds the model endpoint and the key the arm presents. A memory system given those can talk to the
model on a channel no grade counts, so each command starts with only the container's base environment (given by
the runner) and what the declaration names; a hook also keeps the variables its harness's protocol documents
(:attr:`bench.harness.base.Harness.hook_passed_env`), expanded by the harness's shell before the environment is
cleared.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

__all__ = ["sealed_argv", "sealed_hook_command"]


def _assignments(base: Mapping[str, str], declared: Mapping[str, str]) -> list[str]:
    return [f"{name}={value}" for name, value in sorted({**base, **declared}.items())]


def sealed_argv(command: str, args: Sequence[str], declared: Mapping[str, str], base: Mapping[str, str]) -> list[str]:
    """``command args`` started with the ``base`` environment and ``declared`` alone."""
    return ["env", "-i", *_assignments(base, declared), command, *args]


def sealed_hook_command(command: str, base: Mapping[str, str], passed: Sequence[str]) -> str:
    """A hook's shell ``command`` started with ``base`` and the harness's ``passed`` variables alone."""
    kept = [f'{name}="${name}"' for name in passed]
    return " ".join(["env -i", *map(shlex.quote, _assignments(base, {})), *kept, "sh -c", shlex.quote(command)])
