"""What the gateway log says reached the model: the independent witness delivery is cross-checked against.

Claude Code sends hook context to the model as a user-message text block
``<system-reminder>\\n<hookName> hook additional context: <text>\\n</system-reminder>``; the hook name gives
the channel as it does in the session JSONL. CLI 2.1.332 (unlike 2.1.197) appends a PostToolUse hook's block to
the triggering tool result's content instead, so tool results are read too; a block an agent forged into a file it
reads shows up here but never in the transcript's injected steps, so it breaks agreement instead of adding delivery.
Assistant turns are never read: they are the model's own words, except to learn which tool a ``tool_use`` id
names, so that a tool result can be attributed to the memory system's declared MCP tools (the memory-tool channel).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..gateway.exchange import ExchangeRecord
from ..gateway.wire import Part, RequestView
from .claude_code import hook_channel
from .transcript import Channel

__all__ = ["ReceivedContext", "hook_contexts", "memory_tool_results", "received_texts"]

_HOOK_BLOCK = re.compile(
    r"<system-reminder>\s*(?P<hook>[^\s]+) hook additional context: (?P<text>.*?)\s*</system-reminder>", re.S
)


@dataclass(frozen=True)
class ReceivedContext:
    sequence: int  # the exchange that first carried it
    channel: Channel
    hook: str
    text: str


def _message_requests(exchanges: Iterable[ExchangeRecord]) -> Iterator[tuple[int, RequestView]]:
    for exchange in exchanges:
        route = exchange.path.split("?", 1)[0]
        if exchange.method == "POST" and route == "/v1/messages" and isinstance(exchange.request_body, dict):
            yield exchange.sequence, RequestView.of(exchange.request_body)


def hook_contexts(exchanges: Iterable[ExchangeRecord]) -> tuple[ReceivedContext, ...]:
    """Every distinct hook context the model was sent, in the order it was first sent."""
    seen: dict[tuple[str, str], ReceivedContext] = {}
    for sequence, view in _message_requests(exchanges):
        for text in view.texts(Part.USER) + view.texts(Part.TOOL_RESULTS):
            for match in _HOOK_BLOCK.finditer(text):
                hook, body = match["hook"], match["text"]
                seen.setdefault((hook, body), ReceivedContext(sequence, hook_channel(hook), hook, body))
    return tuple(seen.values())


def received_texts(exchanges: Iterable[ExchangeRecord]) -> tuple[str, ...]:
    """Every non-assistant text (system, user, tool results) of every messages request."""
    return tuple(text for _, view in _message_requests(exchanges) for text in view.texts(Part.ANY))


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "\n".join(b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str))


def memory_tool_results(exchanges: Iterable[ExchangeRecord], prefixes: tuple[str, ...]) -> tuple[ReceivedContext, ...]:
    """Every distinct result of a tool whose name starts with one of ``prefixes`` that the model was sent."""
    seen: dict[str, ReceivedContext] = {}
    for exchange in exchanges:
        route = exchange.path.split("?", 1)[0]
        body = exchange.request_body
        if not prefixes or exchange.method != "POST" or route != "/v1/messages" or not isinstance(body, dict):
            continue
        names: dict[str, str] = {}
        messages = body.get("messages")
        for message in messages if isinstance(messages, list) else []:
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use":
                    names[str(block.get("id"))] = str(block.get("name"))
                elif block.get("type") == "tool_result" and not block.get("is_error"):
                    call = str(block.get("tool_use_id"))
                    tool = names.get(call, "")
                    if tool.startswith(prefixes) and call not in seen:
                        text = _result_text(block.get("content"))
                        seen[call] = ReceivedContext(exchange.sequence, Channel.MEMORY_TOOL_RETRIEVAL, tool, text)
    return tuple(seen.values())
