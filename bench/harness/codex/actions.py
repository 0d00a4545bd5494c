"""The policy's reply vocabulary rendered as Codex's own tool calls, and a rule's ``offers`` read against a Codex
request.

A policy names tools as Claude Code does (``Read``, ``Write``, ``Edit``, ``Bash``, ``mcp__<server>__<tool>``);
Codex has other tools (docs/harnesses.md, each call shape verified against the CLI):

| policy | Codex output item |
| --- | --- |
| ``Bash {command}`` | ``function_call exec_command {"cmd": command}`` |
| ``Read {file_path}`` | ``function_call exec_command {"cmd": "cat -- <path>"}`` |
| ``Write {file_path, content}`` | ``custom_tool_call apply_patch`` ``*** Add File`` (replaces an existing file) |
| ``Edit {file_path, old_string, new_string}`` | ``custom_tool_call apply_patch`` ``*** Update File`` hunk |
| ``mcp__<server>__<tool> {...}`` | ``function_call`` namespace ``mcp__<server>``, name ``<tool>`` |

An ``Edit`` is a patch hunk of whole lines, so its ``old_string`` and ``new_string`` must be whole lines (end with a
newline); a policy whose Edit is not is refused when it is checked, before any run.

Codex defers MCP tools: a request does not define them, its developer message announces each server's namespace
(``- mcp__<server>`` under "Deferred tool namespaces") and the model finds or calls the tools by namespace. So an MCP
tool is offered when its namespace is announced or defined.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...contracts.strict_json import parse_json
from ...errors import ContractError
from ..base import ClientCall
from .injected import namespaces_announced

__all__ = ["NATIVE_TOOLS", "SHELL_HOOK_NAME", "codex_call", "is_compaction", "offered", "require_renderable"]

MCP_PREFIX = "mcp__"
SHELL, PATCH = "exec_command", "apply_patch"
SHELL_HOOK_NAME = "Bash"  # hooks name an exec_command call by Claude Code's name for it (docs/harnesses.md)
_METADATA = "x-codex-turn-metadata"
# The Codex tool each policy tool name is carried by.
NATIVE_TOOLS: Mapping[str, str] = {"Bash": SHELL, "Read": SHELL, "Write": PATCH, "Edit": PATCH}


def _text(value: Any, field: str, tool: str) -> str:
    if not isinstance(value, str):
        raise ContractError(f"a {tool} reply needs a string {field!r}, got {value!r}")
    return value


def _lines(text: str, field: str) -> list[str]:
    if text and not text.endswith("\n"):
        raise ContractError(f"an Edit's {field} must be whole lines (end with a newline) to become a patch hunk")
    return text.splitlines()


def _patch(body: list[str]) -> str:
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n"


def _write(tool_input: Mapping[str, Any]) -> str:
    path = _text(tool_input.get("file_path"), "file_path", "Write")
    content = _text(tool_input.get("content"), "content", "Write")
    return _patch([f"*** Add File: {path}", *(f"+{line}" for line in content.splitlines())])


def _edit(tool_input: Mapping[str, Any]) -> str:
    path = _text(tool_input.get("file_path"), "file_path", "Edit")
    old = _lines(_text(tool_input.get("old_string"), "old_string", "Edit"), "old_string")
    new = _lines(_text(tool_input.get("new_string"), "new_string", "Edit"), "new_string")
    return _patch([f"*** Update File: {path}", "@@", *(f"-{line}" for line in old), *(f"+{line}" for line in new)])


def _shell(name: str, tool_input: Mapping[str, Any]) -> str:
    if name == "Read":
        return f"cat -- {shlex.quote(_text(tool_input.get('file_path'), 'file_path', 'Read'))}"
    return _text(tool_input.get("command"), "command", "Bash")


def codex_call(name: str, tool_input: Mapping[str, Any]) -> ClientCall:
    """The call that makes Codex run the policy's ``name`` call: a function call (arguments an object), or the
    freeform ``apply_patch`` (arguments the patch text, which the Responses dialect sends as a custom tool call)."""
    if name.startswith(MCP_PREFIX) and "__" in name.removeprefix(MCP_PREFIX):
        server, tool = name.removeprefix(MCP_PREFIX).split("__", 1)
        return ClientCall(name=tool, namespace=f"{MCP_PREFIX}{server}", arguments=dict(tool_input))
    if NATIVE_TOOLS.get(name) == PATCH:
        patch = _write(tool_input) if name == "Write" else _edit(tool_input)
        return ClientCall(name=PATCH, arguments=patch)
    if NATIVE_TOOLS.get(name) == SHELL:
        return ClientCall(name=SHELL, arguments={"cmd": _shell(name, tool_input)})
    raise ContractError(
        f"the policy's tool {name!r} has no Codex counterpart; use Read, Write, Edit, Bash or mcp__<server>__<tool>"
    )


def require_renderable(calls: Iterable[tuple[str, Mapping[str, Any]]]) -> None:
    """Refuse, before any run, a policy call Codex cannot carry (an unknown tool, a partial-line Edit)."""
    for name, tool_input in calls:
        codex_call(name, tool_input)


def offered(defined: frozenset[str], system: Sequence[str]) -> frozenset[str]:
    """The policy tool names a Codex request offers: a native name when the Codex tool that carries it is defined;
    an MCP tool a tool search brought in (``mcp__<server>__<tool>``); and ``mcp__<server>`` for each namespace the
    settings (``system``) announce as deferred, which offers every tool of that server."""
    native = {name for name, carrier in NATIVE_TOOLS.items() if carrier in defined}
    mcp = {name for name in defined if name.startswith(MCP_PREFIX)}
    announced = {space for space in namespaces_announced(system) if space.startswith(MCP_PREFIX)}
    return frozenset(native | mcp | announced)


def is_compaction(headers: Mapping[str, str]) -> bool:
    """A compaction is marked in the CLI's turn metadata header (``request_kind``); any other request is a turn."""
    try:
        metadata = parse_json(headers.get(_METADATA, "{}"), f"the {_METADATA} header")
    except ContractError:  # a header the CLI did not write: not a compaction it asked for
        return False
    return isinstance(metadata, dict) and metadata.get("request_kind") == "compaction"
