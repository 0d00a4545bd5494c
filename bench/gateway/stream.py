"""Server-sent events, whichever dialect speaks them: an event, its encoding, and a byte stream decoded.

A dialect (:mod:`.dialects`) knows which events its API sends and how a client rebuilds an answer from them; the
gateway keeps every decoded event in its record, so the record holds a stream exactly as it was delivered,
whatever it contained.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from ..contracts import ContractModel

__all__ = ["SseDecoder", "StreamEvent", "encode_sse", "text_chunks"]

_TEXT_CHUNK = 48  # small enough that clients must really reassemble deltas, as they do with a real model


class StreamEvent(ContractModel):
    """One server-sent event: its name and its data (parsed JSON, or the raw text when it was not JSON)."""

    event: str
    data: JsonValue


def encode_sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def text_chunks(text: str) -> list[str]:
    """``text`` in the pieces a stream delivers it in (one empty piece for empty text)."""
    return [text[i : i + _TEXT_CHUNK] for i in range(0, len(text), _TEXT_CHUNK)] or [""]


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
