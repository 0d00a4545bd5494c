"""Server-sent events of the Messages API: a message as a stream, a stream decoded, and a stream reassembled.

The documented sequence: ``message_start`` (the message with empty content and the usage so far), then for each
content block ``content_block_start``, ``content_block_delta`` events and ``content_block_stop``, then
``message_delta`` (stop_reason and the final, cumulative usage) and ``message_stop``. ``ping`` events may come
anywhere; an ``error`` event can end a stream early. Deltas: ``text_delta`` (text), ``input_json_delta``
(``partial_json`` of a tool input, parsed when its block stops), ``thinking_delta`` and ``signature_delta`` (a
thinking block and its signature), ``citations_delta`` (one citation of a text block).

The gateway keeps every decoded event in its record, so the record holds the stream exactly as it was delivered
whatever it contained; the reassembled message beside it is what a client builds from it, as the SDKs do.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from ..contracts import ContractModel

__all__ = ["SseDecoder", "StreamEvent", "assemble_message", "encode_sse", "message_events", "stream_finished"]

_TEXT_CHUNK = 48  # small enough that clients must really reassemble deltas, as they do with a real model


class StreamEvent(ContractModel):
    """One server-sent event: its name and its data (parsed JSON, or the raw text when it was not JSON)."""

    event: str
    data: JsonValue


def encode_sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _chunks(text: str) -> list[str]:
    return [text[i : i + _TEXT_CHUNK] for i in range(0, len(text), _TEXT_CHUNK)] or [""]


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


def _parse_data(text: str) -> JsonValue:
    try:
        parsed: JsonValue = json.loads(text)
    except (ValueError, RecursionError):
        return text  # kept as sent: the record holds what was delivered, readable or not
    return parsed


@dataclass
class SseDecoder:
    """Incremental decoder of an SSE byte stream into events; comment lines carry nothing and are dropped."""

    _buffer: bytes = b""
    _lines: list[str] = field(default_factory=list)

    def feed(self, data: bytes) -> list[StreamEvent]:
        self._buffer += data
        events: list[StreamEvent] = []
        while b"\n" in self._buffer:
            raw, self._buffer = self._buffer.split(b"\n", 1)
            line = raw.decode("utf-8", "replace").rstrip("\r")
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
                events.append(StreamEvent(event=event, data=_parse_data("\n".join(payload))))
        return events


def stream_finished(events: Iterable[StreamEvent]) -> bool:
    """Whether a stream ran to its documented end: a message_delta, then message_stop, and no error event."""
    names = [event.event for event in events]
    return "error" not in names and "message_delta" in names and names[-1:] == ["message_stop"]


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
