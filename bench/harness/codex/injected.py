"""Injected context in a Codex request (the Responses API body the gateway records), recognized where the CLI puts
it; a request carries no record of who wrote an item, so place and role decide (verified, docs/harnesses.md):

- ``input[0]`` is the base prompt and ``input[1]`` the settings (skills, permissions, deferred tool namespaces), both
  developer messages the harness writes; a ``## Memory`` part there is the CLI's own memory, which must be off;
- the user-level instructions file arrives as the first part of a user message that also holds the
  ``<environment_context>``: ``# AGENTS.md instructions`` (`` for <cwd>`` when project files join it), a blank line,
  ``<INSTRUCTIONS>``, the text, ``</INSTRUCTIONS>``: the static-context channel;
- a hook's additional context is a later developer message with the raw text, placed right after what fired it: a
  tool call (before the call's output), the prompt, or the session's start or resumption.

No tool of the agent can write a developer message or the environment message: tool output is a ``*_output`` item,
the model's words an assistant message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..transcript import Channel

__all__ = [
    "CALLS",
    "OUTPUTS",
    "HookPlace",
    "InjectedPart",
    "agents_text",
    "builtin_memory_on",
    "deferred_namespaces",
    "hook_name",
    "injected_parts",
    "namespaces_announced",
]

_PREAMBLE = 2  # the base prompt and the settings message
_AGENTS = re.compile(
    r"# AGENTS\.md instructions(?: for [^\n]*)?\n\n<INSTRUCTIONS>\n(?P<text>.*)\n</INSTRUCTIONS>\Z", re.S
)
_ENVIRONMENT = "<environment_context>"
_DEFERRED = re.compile(r"<tools>\nDeferred tool namespaces:\n(?P<lines>(?:- [^\n]*\n)*)</tools>")
_MEMORY = "## Memory"
# The tool name the CLI gives its hooks for a tool the model calls by another name (docs/harnesses.md: PostToolUse
# ``tool_name`` is ``Bash`` for ``exec_command``); every other tool is named as the model calls it.
_HOOK_TOOLS = {"exec_command": "Bash"}
CALLS = frozenset({"function_call", "custom_tool_call", "tool_search_call"})
OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})


@dataclass(frozen=True)
class InjectedPart:
    channel: Channel
    text: str
    item: int  # its index in the request's ``input``
    trigger: str | None = None  # the call id of the tool call that fired it (anchored recall)


def _parts(item: Mapping[str, Any]) -> list[str]:
    content = item.get("content")
    if isinstance(content, str):
        return [content]
    parts = content if isinstance(content, list) else []
    return [str(part["text"]) for part in parts if isinstance(part, dict) and isinstance(part.get("text"), str)]


def _items(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    items = body.get("input")
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def _message(item: Mapping[str, Any], role: str) -> bool:
    return item.get("type", "message") == "message" and item.get("role") == role


def namespaces_announced(texts: Iterable[str]) -> tuple[str, ...]:
    """The namespaces a settings text announces as deferred (``mcp__<server>`` per working MCP server)."""
    found: list[str] = []
    for text in texts:
        for match in _DEFERRED.finditer(text):
            found += [line[2:].split(":", 1)[0].strip() for line in match["lines"].splitlines()]
    return tuple(found)


def deferred_namespaces(body: Mapping[str, Any]) -> tuple[str, ...]:
    """The namespaces a request's settings message (``input[1]``) announces; nothing else can announce one."""
    items = _items(body)
    return namespaces_announced(_parts(items[1]) if len(items) > 1 and _message(items[1], "developer") else ())


def builtin_memory_on(body: Mapping[str, Any]) -> bool:
    """Whether the CLI's own memory reached the model: a ``## Memory`` part in the settings message."""
    items = _items(body)
    return len(items) > 1 and any(part.startswith(_MEMORY) for part in _parts(items[1]))


def agents_text(text: str) -> str | None:
    """The instructions a text carries in the CLI's AGENTS.md wrapper; None when it is not one."""
    match = _AGENTS.match(text)
    return None if match is None else match["text"]


def _static(items: Sequence[Mapping[str, Any]]) -> Iterator[InjectedPart]:
    for index, item in enumerate(items):
        parts = _parts(item)
        if _message(item, "user") and any(part.startswith(_ENVIRONMENT) for part in parts):
            text = agents_text(parts[0])
            if text is not None:
                yield InjectedPart(Channel.STATIC_CONTEXT, text, index)


def hook_name(trigger: str | None, after_prompt: bool) -> str:
    """The hook whose context sits at a place, as the CLI's hooks and matchers name it: after a call of ``trigger``
    (the tool as the model called it) ``PostToolUse:<tool>`` (PreToolUse context lands at the same place and reads
    as it), after the prompt ``UserPromptSubmit``, elsewhere ``SessionStart``."""
    if trigger is not None:
        return f"PostToolUse:{_HOOK_TOOLS.get(trigger, trigger)}"
    return "UserPromptSubmit" if after_prompt else "SessionStart"


class HookPlace:
    """Where a hook's context would land now, read item by item: after an open tool call (anchored to it), after
    the prompt, or anywhere else (a session's start or resumption). Shared by the request and rollout readers."""

    def __init__(self) -> None:
        self._open_calls: list[str] = []  # call ids whose output has not come yet, newest last
        self._after_prompt = False

    def channel(self) -> tuple[Channel, str | None]:
        if self._open_calls:
            return Channel.ANCHOR_TRIGGERED_RECALL, self._open_calls[-1]
        return (Channel.PROMPT_TIME_RETRIEVAL if self._after_prompt else Channel.SESSION_START), None

    def see(self, item: Mapping[str, Any]) -> None:
        kind = item.get("type", "message")
        if kind in CALLS:
            self._open_calls.append(str(item.get("call_id")))
        elif kind in OUTPUTS:
            self._open_calls = [call for call in self._open_calls if call != item.get("call_id")]
        if not _message(item, "developer"):  # hook context after the prompt leaves the next one after it too
            prompt = _message(item, "user") and not any(part.startswith(_ENVIRONMENT) for part in _parts(item))
            self._after_prompt = prompt


def _hooks(items: Sequence[Mapping[str, Any]]) -> Iterator[InjectedPart]:
    place = HookPlace()
    for index, item in enumerate(items):
        if index >= _PREAMBLE and _message(item, "developer"):
            channel, trigger = place.channel()
            yield from (InjectedPart(channel, text, index, trigger) for text in _parts(item))
        place.see(item)


def injected_parts(body: Mapping[str, Any]) -> tuple[InjectedPart, ...]:
    """Every injected part of a request, in input order: the instructions file and each hook's context."""
    items = _items(body)
    return tuple(sorted((*_static(items), *_hooks(items)), key=lambda part: part.item))
