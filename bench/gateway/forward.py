"""Forward mode: relay a request to the provider and bring back its answer, its events and its usage.

The arm's client never holds the real key: the gateway drops the arm's stand-in key and authenticates with the
one from its own environment, in the header the provider takes (``x-api-key`` for Anthropic, ``Authorization:
Bearer`` for OpenRouter and OpenAI). The dialect reads the answer: its events, its usage, whether it finished.
A streamed answer is relayed chunk by chunk as it arrives (the client sees real timing) while a decoder keeps every
event for the record and the meter; a client that goes away mid-stream does not stop the read, so the answer is
still metered from its own usage. A whole answer is relayed byte for byte, with the
headers a client acts on (``retry-after`` on a 429, the request id).

The caller learns every answer (``decided``) before its last bytes reach the client: a whole answer before it is
sent, a stream before the chunk that ends it (one of the dialect's ending events, e.g. ``message_stop``), so the
gateway has charged it, and stopped the arm if it must, by the time the client can send its next request.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from .config import UpstreamAuth
from .dialects import Dialect, ErrorKind
from .metering import TokenUsage
from .stream import SseDecoder, StreamEvent

__all__ = ["Relayed", "Sink", "UpstreamProvider"]

# Hop-by-hop headers, credentials and compression (the relay must read the bytes) are not passed on.
_DROPPED = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "te",
        "upgrade",
        "expect",
        "x-api-key",
        "authorization",
        "accept-encoding",
    }
)
_PASSED_BACK = frozenset({"content-type", "retry-after", "request-id", "x-should-retry"})
_TIMEOUT_SECONDS = 600.0

Headers = Sequence[tuple[str, str]]


class Sink(Protocol):
    """Where an answer goes: the client's connection. ``write`` never raises; a client gone is noted instead."""

    def send_json(self, status: int, body: Any) -> None: ...

    def send_raw(self, status: int, headers: Headers, body: bytes) -> None: ...

    def begin_stream(self, status: int, headers: Headers) -> None: ...

    def write(self, data: bytes) -> None: ...


@dataclass(frozen=True)
class Relayed:
    status: int
    streamed: bool
    body: Any  # the complete message (reassembled if streamed) or the provider's error body
    events: tuple[StreamEvent, ...] | None  # a streamed answer's events, as relayed
    usage: TokenUsage | None  # the answer's complete, readable usage; None when missing, malformed or cut short
    billable: bool  # the provider may have billed it: it answered 200, or it went silent after taking the request
    unreachable: bool = False  # the gateway answered 502 itself


def _passed_back(response: http.client.HTTPResponse, dialect: Dialect) -> list[tuple[str, str]]:
    return [
        (name, value)
        for name, value in response.getheaders()
        if name.lower() in _PASSED_BACK or name.lower().startswith(dialect.passed_back_prefixes)
    ]


def _parse(raw: bytes) -> Any:
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: a body nested past Python's stack, kept as text
        return raw.decode("utf-8", "replace")
    return parsed


class UpstreamProvider:
    def __init__(self, base_url: str, api_key: str, auth: UpstreamAuth, dialect: Dialect) -> None:
        self._dialect = dialect
        parts = urlsplit(base_url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        bearer = auth is UpstreamAuth.BEARER
        self._auth = ("authorization", f"Bearer {api_key}") if bearer else ("x-api-key", api_key)

    def __repr__(self) -> str:  # the key stays out of every repr, log line and traceback
        return f"UpstreamProvider({'https' if self._https else 'http'}://{self._host}:{self._port}{self._prefix})"

    def _connect(self) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        return cls(self._host, self._port, timeout=_TIMEOUT_SECONDS)

    def relay(
        self,
        sink: Sink,
        method: str,
        path: str,
        headers: Mapping[str, str],
        body: bytes,
        decided: Callable[[Relayed], None],
    ) -> Relayed:
        """Relay one request; ``decided`` gets the answer once, before the client has all of it."""
        outgoing = {k: v for k, v in headers.items() if k.lower() not in _DROPPED}
        outgoing[self._auth[0]] = self._auth[1]
        connection = self._connect()
        try:
            try:
                connection.request(method, self._prefix + path, body=body, headers=outgoing)
            except (OSError, http.client.HTTPException) as exc:
                return self._unreachable(sink, exc, decided, billable=False)
            try:
                response = connection.getresponse()
                if "text/event-stream" in response.getheader("content-type", ""):
                    return self._relay_stream(sink, response, decided)
                raw = response.read()
            except (OSError, http.client.HTTPException) as exc:
                return self._unreachable(
                    sink, exc, decided, billable=True
                )  # it took the request: it may have billed it
            parsed = _parse(raw)
            usage = self._dialect.answer_usage(parsed)
            relayed = Relayed(response.status, False, parsed, None, usage, billable=response.status == 200)
            decided(relayed)
            sink.send_raw(response.status, _passed_back(response, self._dialect), raw)
            return relayed
        finally:
            connection.close()

    def _unreachable(self, sink: Sink, exc: Exception, decided: Callable[[Relayed], None], billable: bool) -> Relayed:
        message = f"the model endpoint could not be reached: {exc or type(exc).__name__}"
        error = self._dialect.error_body(ErrorKind.SERVER, message)
        relayed = Relayed(502, False, error, None, None, billable=billable, unreachable=True)
        decided(relayed)
        sink.send_json(502, error)
        return relayed

    def _streamed(self, status: int, events: list[StreamEvent], cut: bool) -> Relayed:
        usage = None if cut else self._dialect.stream_usage(events)
        return Relayed(status, True, self._dialect.assemble(events), tuple(events), usage, billable=status == 200)

    def _relay_stream(
        self, sink: Sink, response: http.client.HTTPResponse, decided: Callable[[Relayed], None]
    ) -> Relayed:
        sink.begin_stream(response.status, _passed_back(response, self._dialect))
        decoder = SseDecoder()
        events: list[StreamEvent] = []
        told = cut = False
        try:
            while chunk := response.read1(65536):
                fresh = decoder.feed(chunk)
                events.extend(fresh)
                if not told and any(event.event in self._dialect.ending_events for event in fresh):
                    decided(self._streamed(response.status, events, cut=False))  # before the client reads the end
                    told = True
                sink.write(chunk)
        except (OSError, http.client.HTTPException):
            cut = True  # the provider went away mid-stream: what arrived is relayed and kept, its usage is not final
        relayed = self._streamed(response.status, events, cut)
        if not told:
            decided(relayed)
        return relayed
