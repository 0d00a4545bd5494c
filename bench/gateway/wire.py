"""The Anthropic Messages API on the wire: what a request shows the model, and responses as JSON or SSE.

Claude Code posts ``/v1/messages?beta=true`` with ``stream: true`` and reassembles the reply from the event
sequence message_start, content_block_start, content_block_delta (text_delta / input_json_delta),
content_block_stop, message_delta (stop_reason, usage), message_stop. The same message can be sent whole
when a client asks without streaming, so one message dict is the source of both forms.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "Part",
    "RequestView",
    "SseDecoder",
    "api_error",
    "assemble_message",
    "encode_sse",
    "message_events",
]

_TEXT_CHUNK = 48  # small enough that clients must really reassemble deltas, as they do with a real model


class Part(StrEnum):
    """Which part of a request a phrase is looked for in. Assistant turns never count: they are the model's own."""

    ANY = "any"  # system, user text and tool results
    SYSTEM = "system"
    USER = "user"  # text blocks of user-role messages
    TOOL_RESULTS = "tool-results"
    LATEST = "latest"  # everything in the last user-role message (the newest thing the model is shown)


def _block_texts(content: Any) -> list[str]:
    """Texts of a content value: a bare string or a list of blocks (text, or tool_result holding either)."""
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            texts.append(block["text"])
    return texts


@dataclass(frozen=True)
class RequestView:
    """The texts a Messages request shows the model, by part."""

    system: tuple[str, ...]
    user: tuple[str, ...]
    tool_results: tuple[str, ...]
    latest: tuple[str, ...]
    assistant_turns: int

    @classmethod
    def of(cls, body: dict[str, Any]) -> RequestView:
        user: list[str] = []
        results: list[str] = []
        latest: list[str] = []
        turns = 0
        for message in body.get("messages") or []:
            if not isinstance(message, dict):
                continue
            if message.get("role") == "assistant":
                turns += 1
                continue
            latest = []
            content = message.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            for block in blocks:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_result":
                    found = _block_texts(block.get("content"))
                    results.extend(found)
                else:
                    found = _block_texts([block])
                    user.extend(found)
                latest.extend(found)
        return cls(tuple(_block_texts(body.get("system"))), tuple(user), tuple(results), tuple(latest), turns)

    def texts(self, part: Part) -> tuple[str, ...]:
        if part is Part.ANY:
            return self.system + self.user + self.tool_results
        if part is Part.SYSTEM:
            return self.system
        if part is Part.USER:
            return self.user
        if part is Part.TOOL_RESULTS:
            return self.tool_results
        return self.latest

    @property
    def has_tool_result(self) -> bool:
        return bool(self.tool_results)


def api_error(error_type: str, message: str) -> dict[str, Any]:
    """The body Anthropic sends with a 4xx/5xx status, which clients show to the user verbatim."""
    return {"type": "error", "error": {"type": error_type, "message": message}}


def encode_sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _chunks(text: str) -> list[str]:
    return [text[i : i + _TEXT_CHUNK] for i in range(0, len(text), _TEXT_CHUNK)] or [""]


def message_events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The SSE event sequence that streams ``message`` (a complete assistant message dict)."""
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
            pieces = _chunks(json.dumps(block["input"], separators=(",", ":")))
            deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in pieces]
        else:
            empty = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in _chunks(block["text"])]
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


@dataclass
class SseDecoder:
    """Incremental decoder of an SSE byte stream into (event, JSON data) pairs; comments and pings pass through."""

    _buffer: bytes = b""
    _lines: list[str] = field(default_factory=list)

    def feed(self, data: bytes) -> Iterator[tuple[str, dict[str, Any]]]:
        self._buffer += data
        while b"\n" in self._buffer:
            raw, self._buffer = self._buffer.split(b"\n", 1)
            line = raw.decode("utf-8").rstrip("\r")
            if line:
                self._lines.append(line)
                continue
            event, payload = "message", []
            for item in self._lines:
                name, _, value = item.partition(":")
                value = value.removeprefix(" ")
                if name == "event":
                    event = value
                elif name == "data":
                    payload.append(value)
            self._lines = []
            if payload:
                yield event, json.loads("\n".join(payload))


def assemble_message(events: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Rebuild the complete message a stream described, as a client does (for the record and for metering)."""
    message: dict[str, Any] = {}
    partial: dict[int, str] = {}
    for event, data in events:
        if event == "message_start":
            message = {**data["message"], "content": list(data["message"].get("content", []))}
        elif event == "content_block_start":
            message["content"].insert(data["index"], dict(data["content_block"]))
        elif event == "content_block_delta":
            block, delta = message["content"][data["index"]], data["delta"]
            if delta["type"] == "text_delta":
                block["text"] = block.get("text", "") + delta["text"]
            elif delta["type"] == "input_json_delta":
                partial[data["index"]] = partial.get(data["index"], "") + delta["partial_json"]
        elif event == "content_block_stop" and data["index"] in partial:
            message["content"][data["index"]]["input"] = json.loads(partial.pop(data["index"]) or "{}")
        elif event == "message_delta":
            message.update({k: v for k, v in data["delta"].items()})
            message["usage"] = {**message.get("usage", {}), **data.get("usage", {})}
    return message
