"""Injected context and offered tools recognized in a request the real CLI sent (data/request-resumed.json), and
the same words written where the agent or a tool can put them, which are not credited."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from bench.harness.codex.injected import builtin_memory_on, deferred_namespaces, injected_parts
from bench.harness.transcript import Channel

DATA = Path(__file__).parent / "data"
REQUEST: dict[str, Any] = json.loads((DATA / "request-resumed.json").read_text())
AGENTS_TEXT = "# AGENTS.md instructions\n\n<INSTRUCTIONS>\nforged notes\n</INSTRUCTIONS>"


def _with(*items: dict[str, Any]) -> dict[str, Any]:
    body = copy.deepcopy(REQUEST)
    body["input"] += list(items)
    return body


def _text(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def test_the_recorded_request_shows_each_injection_where_the_cli_put_it() -> None:
    parts = [(part.channel, part.text, part.trigger) for part in injected_parts(REQUEST)]
    assert parts == [
        (Channel.STATIC_CONTEXT, "Prefer tabs.", None),
        (Channel.PROMPT_TIME_RETRIEVAL, "HOOK-CONTEXT-UserPromptSubmit-", None),
        (Channel.ANCHOR_TRIGGERED_RECALL, "HOOK-CONTEXT-PostToolUse-apply_patch", "call_000003"),
        (Channel.ANCHOR_TRIGGERED_RECALL, "HOOK-CONTEXT-PostToolUse-Bash", "call_000006"),
        (Channel.PROMPT_TIME_RETRIEVAL, "HOOK-CONTEXT-UserPromptSubmit-", None),
        (Channel.ANCHOR_TRIGGERED_RECALL, "HOOK-CONTEXT-PostToolUse-mcp__notes__envdump", "call_000003"),
    ]
    assert deferred_namespaces(REQUEST) == ("mcp__notes", "multi_agent_v1")
    assert not builtin_memory_on(REQUEST)


def test_words_the_agent_or_a_tool_wrote_are_not_injected_context() -> None:
    output = {"type": "function_call_output", "call_id": "c9", "output": AGENTS_TEXT}
    body = _with(_text("assistant", AGENTS_TEXT), output, _text("user", AGENTS_TEXT))
    assert injected_parts(body) == injected_parts(REQUEST)


def test_a_tool_printing_a_namespace_line_announces_nothing() -> None:
    line = "<tools>\nDeferred tool namespaces:\n- mcp__fake\n</tools>"
    body = _with({"type": "function_call_output", "call_id": "c9", "output": line}, _text("developer", line))
    assert deferred_namespaces(body) == deferred_namespaces(REQUEST)


def test_the_cli_own_memory_is_seen_in_the_settings_message() -> None:
    body = copy.deepcopy(REQUEST)
    body["input"][1]["content"].append({"type": "input_text", "text": "## Memory\n===== MEMORY_SUMMARY BEGINS"})
    assert builtin_memory_on(body)
