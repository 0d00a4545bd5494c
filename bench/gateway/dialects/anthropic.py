"""The Anthropic Messages API: requests, answers, server-sent events, usage and error bodies.

Claude Code posts ``/v1/messages?beta=true`` with ``stream: true``. The documented event sequence:
``message_start`` (the message with empty content and the usage so far), then for each content block
``content_block_start``, ``content_block_delta`` events and ``content_block_stop``, then ``message_delta``
(stop_reason and the final, cumulative usage) and ``message_stop``. ``ping`` events may come anywhere; an ``error``
event can end a stream early. Deltas: ``text_delta`` (text), ``input_json_delta`` (``partial_json`` of a tool
input, parsed when its block stops), ``thinking_delta`` and ``signature_delta`` (a thinking block and its
signature), ``citations_delta`` (one citation of a text block).

The gateway keeps every decoded event in its record, so the record holds the stream exactly as it was delivered
whatever it contained; the reassembled message beside it is what a client builds from it, as the SDKs do.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ...contracts.api_dialect import ApiDialect
from ..conversation import MessageChain
from ..metering import TokenUsage, metered_usage, stream_usage
from ..neutral import Conversation, Message, NeutralReply, RequestView, Role, TextPart, ToolCallPart, ToolResultPart
from ..policy import offered_tools as conversation_tools
from ..stream import StreamEvent, text_chunks
from .base import Dialect, ErrorKind, Rejection, estimate_tokens

__all__ = [
    "AnthropicMessages",
    "api_error",
    "assemble_message",
    "message_events",
    "offered_tools",
    "request_view",
    "stream_finished",
]

_ERROR_TYPES = {
    ErrorKind.AUTHENTICATION: "authentication_error",
    ErrorKind.NOT_FOUND: "not_found_error",
    ErrorKind.TOO_LARGE: "request_too_large",
    ErrorKind.INVALID_REQUEST: "invalid_request_error",
    ErrorKind.SERVER: "api_error",
}


def api_error(error_type: str, message: str) -> dict[str, Any]:
    """The body Anthropic sends with a 4xx/5xx status, which clients show to the user verbatim."""
    return {"type": "error", "error": {"type": error_type, "message": message}}


def _block_texts(content: Any) -> list[str]:
    """Texts of a content value: a bare string or a list of blocks (text, or tool_result holding either)."""
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            texts.append(block["text"])
    return texts


def _part(block: dict[str, Any], assistant: bool) -> TextPart | ToolCallPart | ToolResultPart | None:
    kind = block.get("type")
    if kind == "tool_result" and not assistant:
        content = tuple(_block_texts(block.get("content")))
        return ToolResultPart(
            id=str(block.get("tool_use_id", "")), content=content, is_error=block.get("is_error") is True
        )
    if kind == "tool_use" and assistant and isinstance(block.get("name"), str):
        call = {"id": str(block.get("id", "")), "name": block["name"], "arguments": block.get("input")}
        return ToolCallPart.model_construct(**call)  # parsed JSON already: not re-validated at any depth
    texts = _block_texts([block])
    return TextPart(text=texts[0]) if texts else None


def _message(message: dict[str, Any]) -> Message:
    assistant = message.get("role") == "assistant"
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    parts = [_part(block, assistant) for block in blocks if isinstance(block, dict)]
    return Message(role=Role.ASSISTANT if assistant else Role.USER, parts=tuple(p for p in parts if p is not None))


def message_events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The SSE event sequence that streams ``message`` (a complete assistant message of text and tool_use blocks)."""
    usage = dict(message["usage"])
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage, "output_tokens": 1},
    }
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            empty = {**block, "input": {}}
            pieces = text_chunks(json.dumps(block["input"], separators=(",", ":")))
            deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in pieces]
        else:
            empty = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in text_chunks(block["text"])]
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": empty}
        for delta in deltas:
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    ending: dict[str, Any] = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    yield (
        "message_delta",
        {"type": "message_delta", "delta": ending, "usage": {"output_tokens": usage["output_tokens"]}},
    )
    yield "message_stop", {"type": "message_stop"}


def _apply_delta(block: dict[str, Any], delta: dict[str, Any], partial: list[str]) -> None:
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = str(block.get("text", "")) + str(delta.get("text", ""))
    elif kind == "input_json_delta":
        partial.append(str(delta.get("partial_json", "")))
    elif kind == "thinking_delta":
        block["thinking"] = str(block.get("thinking", "")) + str(delta.get("thinking", ""))
    elif kind == "signature_delta":
        block["signature"] = str(block.get("signature", "")) + str(delta.get("signature", ""))
    elif kind == "citations_delta":
        block.setdefault("citations", []).append(delta.get("citation"))


def _tool_input(pieces: list[str]) -> Any:
    """A tool input from its partial JSON; text that does not parse stays text, so nothing sent is lost."""
    text = "".join(pieces)
    try:
        return json.loads(text or "{}")
    except (ValueError, RecursionError):
        return text


def _usage(message: dict[str, Any], reported: Any) -> None:
    """Cumulative counts of message_delta replace message_start's, as the SDKs apply them (nulls do not)."""
    if isinstance(reported, dict):
        usage = message.get("usage")
        counts = {k: v for k, v in reported.items() if v is not None}
        message["usage"] = {**(usage if isinstance(usage, dict) else {}), **counts}


def assemble_message(events: Iterable[StreamEvent]) -> dict[str, Any]:
    """Rebuild the message a stream described, as a client does; an out-of-shape event changes nothing."""
    message: dict[str, Any] = {"content": []}
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, list[str]] = {}
    for item in events:
        data: dict[str, Any] = item.data if isinstance(item.data, dict) else {}
        index = data.get("index")
        if item.event == "message_start" and isinstance(data.get("message"), dict):
            message = {**data["message"], "content": []}
        elif item.event == "content_block_start" and isinstance(index, int):
            blocks[index] = dict(data.get("content_block") or {})
            message["content"].append(blocks[index])
        elif item.event == "content_block_delta" and index in blocks and isinstance(data.get("delta"), dict):
            _apply_delta(blocks[index], data["delta"], partial.setdefault(index, []))
        elif item.event == "content_block_stop" and index in partial and index in blocks:
            if blocks[index].get("type") in ("tool_use", "server_tool_use") or partial[index]:
                blocks[index]["input"] = _tool_input(partial.pop(index))
        elif item.event == "message_delta":
            message.update(data["delta"] if isinstance(data.get("delta"), dict) else {})
            message.update({k: v for k, v in data.items() if k not in ("type", "delta", "usage")})
            _usage(message, data.get("usage"))
    return message


def stream_finished(events: Iterable[StreamEvent]) -> bool:
    """Whether a stream ran to its documented end: a message_delta, then message_stop, and no error event."""
    names = [event.event for event in events]
    return "error" not in names and "message_delta" in names and names[-1:] == ["message_stop"]


class AnthropicMessages(Dialect):
    name = ApiDialect.ANTHROPIC_MESSAGES
    model_path = "/v1/messages"
    count_path = "/v1/messages/count_tokens"
    output_field = "max_tokens"
    ending_events = frozenset({"message_stop", "error"})
    passed_back_prefixes = ("anthropic-ratelimit-",)

    def reject(self, route: str, headers: Mapping[str, str], body: Any) -> Rejection | None:
        if not headers.get("anthropic-version"):
            return Rejection(True, "anthropic-version: header is required")
        if route == self.model_path and isinstance(body, dict) and self.output_bound(body) is None:
            return Rejection(False, f"max_tokens: a positive integer is required, got {body.get('max_tokens')!r}")
        return None

    def parse(self, body: dict[str, Any]) -> Conversation:
        messages = body.get("messages")
        tools = body.get("tools")
        defined = [t for t in tools if isinstance(t, dict) and "name" in t] if isinstance(tools, list) else []
        return Conversation(
            system=tuple(_block_texts(body.get("system"))),
            messages=tuple(
                _message(m) for m in (messages if isinstance(messages, list) else []) if isinstance(m, dict)
            ),
            tools=frozenset(str(t["name"]) for t in defined),
        )

    def reply(self, answer: Any) -> Message | None:
        content = answer.get("content") if isinstance(answer, dict) and answer.get("type") == "message" else None
        return _message({"role": "assistant", "content": content}) if isinstance(content, list) else None

    def output_bound(self, body: dict[str, Any]) -> int | None:
        bound = body.get("max_tokens")
        return bound if type(bound) is int and bound > 0 else None

    def render(self, reply: NeutralReply, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage]:
        content: list[dict[str, Any]] = []
        for part in reply.parts:
            if isinstance(part, ToolCallPart):
                call = {"name": part.qualified_name, "input": part.arguments}
                content.append({"type": "tool_use", "id": f"toolu_{part.id}", **call})
            else:
                content.append({"type": "text", "text": part.text})
        usage = {"input_tokens": estimate_tokens(body), "output_tokens": estimate_tokens(content)}
        message = {
            "id": f"msg_{reply.seed[16:40]}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", ""),
            "content": content,
            "stop_reason": "tool_use" if reply.calls_tools else "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }
        return message, TokenUsage.of(usage)

    def events(self, answer: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        return message_events(answer)

    def assemble(self, events: Iterable[StreamEvent]) -> dict[str, Any]:
        return assemble_message(events)

    def finished(self, events: Iterable[StreamEvent]) -> bool:
        return stream_finished(events)

    def stream_usage(self, events: list[StreamEvent]) -> TokenUsage | None:
        if not stream_finished(events):
            return None
        data: list[tuple[str, dict[str, Any]]] = [(e.event, e.data) for e in events if isinstance(e.data, dict)]
        starts = [d.get("message") for name, d in data if name == "message_start"]
        deltas = [d.get("usage") for name, d in data if name == "message_delta"]
        if len(starts) != 1 or not isinstance(starts[0], dict):
            return None
        return stream_usage(starts[0].get("usage"), deltas)

    def answer_usage(self, answer: object) -> TokenUsage | None:
        return metered_usage(answer.get("usage")) if isinstance(answer, dict) else None

    def error_body(self, kind: ErrorKind, message: str) -> dict[str, Any]:
        return api_error(_ERROR_TYPES[kind], message)

    def key_message(self, presented: bool) -> str:
        return "invalid x-api-key" if presented else "x-api-key header is required"

    def tool_schemas(self, body: dict[str, Any]) -> dict[str, Any]:
        tools = body.get("tools")
        defined = [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
        return {str(t.get("name")): t.get("input_schema") for t in defined if isinstance(t.get("input_schema"), dict)}

    def chain(self, request: dict[str, Any], answer: Any) -> MessageChain | None:
        return MessageChain.of(request, answer)


def request_view(body: dict[str, Any]) -> RequestView:
    """What a recorded Messages request showed the model, by part."""
    return RequestView.of(AnthropicMessages().parse(body))


def offered_tools(body: dict[str, Any]) -> frozenset[str]:
    """The tools a recorded Messages request offered the model (defined, or announced as deferred)."""
    return conversation_tools(AnthropicMessages().parse(body))
