"""Forward mode: relay a request to the provider and bring back its response and usage.

The arm's client never holds the real key: the gateway swaps the arm's stand-in key for the one in its own
environment. A streamed response is relayed chunk by chunk as it arrives (the client sees real timing) while
a decoder reassembles the message for the record and the meter.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from .metering import TokenUsage
from .wire import SseDecoder, api_error, assemble_message

__all__ = ["Relayed", "Sink", "UpstreamProvider"]

# Hop-by-hop headers, credentials and compression (the relay must read the bytes) are not passed on.
_DROPPED = frozenset(
    {"host", "content-length", "connection", "x-api-key", "authorization", "accept-encoding", "keep-alive"}
)
_TIMEOUT_SECONDS = 600.0


class Sink(Protocol):
    """Where a response goes: the client's connection."""

    def send_json(self, status: int, body: Any) -> None: ...

    def begin_stream(self) -> None: ...

    def write(self, data: bytes) -> None: ...


@dataclass(frozen=True)
class Relayed:
    status: int
    streamed: bool
    body: Any  # the complete message (reassembled if streamed) or the provider's error body
    usage: TokenUsage | None


class UpstreamProvider:
    def __init__(self, base_url: str, api_key: str) -> None:
        parts = urlsplit(base_url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._key = api_key

    def _connect(self) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        return cls(self._host, self._port, timeout=_TIMEOUT_SECONDS)

    def relay(self, sink: Sink, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Relayed:
        outgoing = {k: v for k, v in headers.items() if k.lower() not in _DROPPED}
        outgoing["x-api-key"] = self._key
        connection = self._connect()
        try:
            try:
                connection.request(method, self._prefix + path, body=body, headers=outgoing)
                response = connection.getresponse()
            except OSError as exc:
                error = api_error("api_error", f"the upstream API could not be reached: {exc}")
                sink.send_json(502, error)
                return Relayed(502, False, error, None)
            if response.status == 200 and "text/event-stream" in response.getheader("content-type", ""):
                return self._relay_stream(sink, response)
            raw = response.read()
            try:
                parsed: Any = json.loads(raw)
            except ValueError:
                parsed = raw.decode("utf-8", "replace")
            sink.send_json(response.status, parsed)
            usage = parsed.get("usage") if response.status == 200 and isinstance(parsed, dict) else None
            return Relayed(response.status, False, parsed, TokenUsage.of(usage) if usage is not None else None)
        finally:
            connection.close()

    @staticmethod
    def _relay_stream(sink: Sink, response: http.client.HTTPResponse) -> Relayed:
        sink.begin_stream()
        decoder = SseDecoder()
        events: list[tuple[str, dict[str, Any]]] = []
        while chunk := response.read1(65536):
            sink.write(chunk)
            events.extend(decoder.feed(chunk))
        message = assemble_message(events)
        return Relayed(200, True, message, TokenUsage.of(message.get("usage")))
