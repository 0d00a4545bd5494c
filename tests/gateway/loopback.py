"""Loopback servers and clients for gateway tests: real HTTP on real sockets.

:class:`AnthropicDouble` stands in for the paid provider, the one edge the tests cannot reach. It implements the
Messages API as documented (docs.anthropic.com: "Messages", "Streaming Messages", "Errors"), independently of
the gateway's own encoder, so a test of the gateway against it is not the gateway agreeing with itself:

- ``POST /v1/messages``: ``stream: false`` answers the whole message as JSON; ``stream: true`` answers
  ``text/event-stream`` in chunked transfer coding, as the API does: ``message_start`` (empty content, usage with
  the input counts), per block ``content_block_start`` / ``content_block_delta`` / ``content_block_stop`` (deltas
  ``text_delta``, ``input_json_delta`` (the first one empty, as recorded streams show), ``thinking_delta`` then one
  ``signature_delta``), ``ping`` events between, ``message_delta`` (stop_reason, cumulative ``output_tokens``)
  and ``message_stop``. ``POST /v1/messages/count_tokens`` answers ``{"input_tokens": N}``. Other paths: 404.
- The key: ``x-api-key`` (Anthropic) or ``Authorization: Bearer`` (OpenRouter's Anthropic-compatible endpoint,
  ``auth="bearer"``); missing or unknown answers 401 ``authentication_error``. ``anthropic-version`` is required.
- Errors as ``{"type": "error", "error": {"type": ..., "message": ...}}``: 400 ``invalid_request_error``, 401,
  404 ``not_found_error``, 429 ``rate_limit_error`` with ``retry-after``, 500 ``api_error``, 529
  ``overloaded_error``; and the two ways a stream fails: an ``error`` event mid-stream, or the connection cut before
  ``message_stop``.
- Usage: the system prompt's tokens are a cache write the first time a system prompt is seen and a cache read
  after; the rest of the request is input. :attr:`AnthropicDouble.usage` can omit usage, send it malformed, or
  report a usage no request allows (absurd);
  :attr:`AnthropicDouble.billed_usd` keeps what the account was really billed (at :attr:`rates`) either way,
  and ``on_bill`` lets a test move the same amounts on an OpenRouter-shaped account (the fence's credits API).

The scripted model is any function from a request body to a :class:`Reply`.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum, auto
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench.fence import ArmCap, PairCaps
from bench.gateway import ArmKey, Gateway, PolicyPin, Price

KEY = "sk-arm-one"
OTHER_KEY = "sk-arm-two"
PROVIDER_KEY = "sk-ant-api03-provider-secret-0123456789"
MODEL = "claude-sonnet-4-5"
KEY_ENV = "GATEWAY_TEST_PROVIDER_KEY"  # where the tests export PROVIDER_KEY for the gateway
RATES = {"input": Decimal(3), "output": Decimal(15), "cache_write": Decimal("3.75"), "cache_read": Decimal("0.3")}
# The conftest fixture `forward_gateway`: make(cap_one=, cap_two=, recorder=, bearer=) -> a started gateway.
ForwardFactory = Callable[..., AbstractContextManager[Gateway]]
PRICE = Price(input=Decimal(3), output=Decimal(15), cache_write=Decimal("3.75"), cache_read=Decimal("0.3"))

POLICY: dict[str, Any] = {
    "rules": [
        {
            "name": "recall-seen",
            "when": {"contains": ["remember the ledger"], "part": "any"},
            "reply": [{"type": "tool_use", "name": "Read", "input": {"file_path": "/w/ledger.py"}}],
        },
        {"name": "after-tools", "when": {"tool_result_seen": True}, "reply": [{"type": "text", "text": "finished"}]},
    ],
    "default": [{"type": "text", "text": "a plain answer that is long enough to be split into several deltas"}],
}


# ---- the provider double ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """What the scripted model answers: content blocks as the API returns them."""

    content: tuple[dict[str, Any], ...]

    @property
    def stop_reason(self) -> str:
        return "tool_use" if any(block["type"] == "tool_use" for block in self.content) else "end_turn"


def text(words: str) -> Reply:
    return Reply(({"type": "text", "text": words},))


def tool_loop(body: dict[str, Any]) -> Reply:
    """A model that never finishes: every answer asks for one more tool call."""
    turn = sum(1 for message in body["messages"] if message["role"] == "assistant")
    return Reply(({"type": "tool_use", "id": f"toolu_{turn:04d}", "name": "Bash", "input": {"command": "true"}},))


class Fault(Enum):
    RATE_LIMITED = auto()  # 429 rate_limit_error with retry-after
    OVERLOADED = auto()  # 529 overloaded_error
    ERROR_EVENT = auto()  # a stream that starts, then ends with an `error` event
    CUT = auto()  # a stream whose connection closes before message_stop
    SILENT = auto()  # the request is taken (and billed), then the connection closes with no answer
    SERVER_ERROR = auto()  # 500 api_error


class Usage(Enum):
    REPORTED = auto()
    OMITTED = auto()
    MALFORMED = auto()  # counts as strings
    ABSURD = auto()  # well-formed counts no request allows: 10,000,000 output tokens (billed as really produced)


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes


@dataclass
class AnthropicDouble:
    keys: frozenset[str] = frozenset({PROVIDER_KEY})
    auth: str = "x-api-key"  # or "bearer"
    prefix: str = ""  # the base URL's path: "/api" for OpenRouter's https://openrouter.ai/api
    model: Callable[[dict[str, Any]], Reply] = lambda body: text("a short answer from the model")
    usage: Usage = Usage.REPORTED
    faults: list[Fault] = field(default_factory=list)  # one is used per messages request, first first
    replay: list[bytes] = field(default_factory=list)  # recorded SSE bodies, sent verbatim to stream requests
    pace: float = 0.0  # seconds between stream events, as a model that takes its time
    rates: dict[str, Decimal] = field(default_factory=lambda: dict(RATES))  # USD per million tokens
    on_bill: Callable[[Decimal], None] | None = None
    received: list[Received] = field(default_factory=list)
    billed_usd: Decimal = Decimal(0)
    _systems: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def key_of(self, headers: dict[str, str]) -> str | None:
        if self.auth == "bearer":
            value = headers.get("authorization", "")
            return value.removeprefix("Bearer ") if value.startswith("Bearer ") else None
        return headers.get("x-api-key")

    def count(self, body: dict[str, Any], raw: bytes) -> dict[str, int]:
        """Input counts of a request: the system prompt cached (written once, then read), the rest plain input."""
        system = json.dumps(body.get("system", ""), sort_keys=True)
        cached = len(system) // 4
        with self._lock:
            first = system not in self._systems
            self._systems.add(system)
        return {
            "input_tokens": max(1, (len(raw) - len(system)) // 4),
            "cache_creation_input_tokens": cached if first else 0,
            "cache_read_input_tokens": 0 if first else cached,
        }

    def bill(self, usage: dict[str, int]) -> None:
        cost = cost_of(usage, self.rates)
        with self._lock:
            self.billed_usd += cost
        if self.on_bill is not None:
            self.on_bill(cost)

    def next_fault(self) -> Fault | None:
        with self._lock:
            return self.faults.pop(0) if self.faults else None


def cost_of(usage: dict[str, int], rates: dict[str, Decimal] = RATES) -> Decimal:
    """The double's own arithmetic, independent of the gateway's Price: what a usage report costs at ``rates``."""
    total = (
        usage["input_tokens"] * rates["input"]
        + usage["output_tokens"] * rates["output"]
        + usage["cache_creation_input_tokens"] * rates["cache_write"]
        + usage["cache_read_input_tokens"] * rates["cache_read"]
    )
    return total / 1_000_000


def _error(error_type: str, message: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": error_type, "message": message}}).encode()


def _shown_usage(double: AnthropicDouble, usage: dict[str, int]) -> dict[str, Any] | None:
    if double.usage is Usage.OMITTED:
        return None
    if double.usage is Usage.MALFORMED:
        return {name: str(value) for name, value in usage.items()}
    if double.usage is Usage.ABSURD:
        return {**usage, "output_tokens": 10_000_000}
    return usage


def _pieces(value: str, size: int = 7) -> list[str]:
    return [value[i : i + size] for i in range(0, len(value), size)]


def _block_events(index: int, block: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if block["type"] == "thinking":
        start: dict[str, Any] = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": piece} for piece in _pieces(block["thinking"])]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif block["type"] == "tool_use":
        start = {**block, "input": {}}
        partial = ["", *_pieces(json.dumps(block["input"]), 5)]
        deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in partial]
    else:
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": piece} for piece in _pieces(block["text"])]
    yield {"type": "content_block_start", "index": index, "content_block": start}
    yield {"type": "ping"}
    for delta in deltas:
        yield {"type": "content_block_delta", "index": index, "delta": delta}
    yield {"type": "content_block_stop", "index": index}


def _handler(double: AnthropicDouble) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _send(self, status: int, body: bytes, extra: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.send_header("request-id", f"req_{hashlib.sha256(body).hexdigest()[:24]}")
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def do_GET(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            if double.key_of(headers) not in double.keys:
                self._send(401, _error("authentication_error", "invalid x-api-key"))
            else:
                self._send(404, _error("not_found_error", "Not found"))

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            double.received.append(Received(self.path, headers, raw))
            route = self.path.split("?", 1)[0].removeprefix(double.prefix)
            if double.key_of(headers) not in double.keys:
                return self._send(401, _error("authentication_error", "invalid x-api-key"))
            if route not in ("/v1/messages", "/v1/messages/count_tokens"):
                return self._send(404, _error("not_found_error", "Not found"))
            if "anthropic-version" not in headers:
                return self._send(400, _error("invalid_request_error", "anthropic-version: header is required"))
            try:
                body = json.loads(raw)
                assert isinstance(body, dict) and isinstance(body["messages"], list) and "model" in body
            except (ValueError, AssertionError, KeyError):
                return self._send(400, _error("invalid_request_error", "messages: Field required"))
            counts = double.count(body, raw)
            if route.endswith("/count_tokens"):
                return self._send(200, json.dumps({"input_tokens": sum(counts.values())}).encode())
            if not isinstance(body.get("max_tokens"), int):
                return self._send(400, _error("invalid_request_error", "max_tokens: Field required"))
            self._answer(body, counts)

        def _answer(self, body: dict[str, Any], counts: dict[str, int]) -> None:
            if body.get("stream") and double.replay:
                self._begin_stream()
                recording = double.replay.pop(0)
                for i in range(0, len(recording), 100):  # split anywhere, as a network does
                    self._chunk(recording[i : i + 100])
                self.wfile.write(b"0\r\n\r\n")
                return None
            fault = double.next_fault()
            if fault is Fault.RATE_LIMITED:
                message = "Number of request tokens has exceeded your per-minute rate limit"
                return self._send(429, _error("rate_limit_error", message), {"retry-after": "7"})
            if fault is Fault.OVERLOADED:
                return self._send(529, _error("overloaded_error", "Overloaded"))
            if fault is Fault.SERVER_ERROR:
                return self._send(500, _error("api_error", "Internal server error"))
            reply = double.model(body)
            usage = {**counts, "output_tokens": max(1, len(json.dumps(list(reply.content))) // 4)}
            double.bill(usage)  # what the account is charged, whatever the answer shows
            if fault is Fault.SILENT:
                self.close_connection = True
                return None
            message: dict[str, Any] = {
                "id": f"msg_{hashlib.sha256(json.dumps(body).encode()).hexdigest()[:24]}",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": list(reply.content),
                "stop_reason": reply.stop_reason,
                "stop_sequence": None,
            }
            shown = _shown_usage(double, usage)
            if not body.get("stream"):
                return self._send(200, json.dumps({**message, **({} if shown is None else {"usage": shown})}).encode())
            self._stream(message, reply, shown, fault)

        def _begin_stream(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.send_header("cache-control", "no-cache")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()

        def _stream(self, message: dict[str, Any], reply: Reply, shown: dict[str, Any] | None, fault: Any) -> None:
            self._begin_stream()
            start = {**message, "content": [], "stop_reason": None}
            if shown is not None:
                start["usage"] = {**shown, "output_tokens": 1}
            events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
            for index, block in enumerate(reply.content):
                events.extend(_block_events(index, block))
            delta: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": reply.stop_reason}}
            if shown is not None:
                delta["usage"] = {"output_tokens": shown["output_tokens"]}
            events += [delta, {"type": "message_stop"}]
            if fault is Fault.ERROR_EVENT:
                events = [
                    *events[:3],
                    {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
                ]
            if fault is Fault.CUT:
                events = events[:3]
            for event in events:
                self._chunk(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
                time.sleep(double.pace)
            if fault is Fault.CUT:
                self.close_connection = True  # no terminating chunk: the client sees the body end early
                return
            self.wfile.write(b"0\r\n\r\n")

    return Handler


@contextmanager
def serve_double(double: AnthropicDouble) -> Iterator[str]:
    """Serve ``double`` on 127.0.0.1 and yield its base URL."""
    with serve_handler(_handler(double)) as url:
        yield url


@contextmanager
def serve_handler(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 and yield the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# ---- configuration and client helpers ---------------------------------------------------------------------------


def arm(label: str, key: str) -> ArmKey:
    return ArmKey(label=label, key_sha256=hashlib.sha256(key.encode()).hexdigest())


def caps(**per_arm: str) -> PairCaps:
    return PairCaps(arms=tuple(ArmCap(arm=label, cap_usd=Decimal(cap)) for label, cap in per_arm.items()))


def write_policy(directory: Path, policy: dict[str, Any] = POLICY) -> PolicyPin:
    data = json.dumps(policy).encode()
    (directory / "policy.json").write_bytes(data)
    return PolicyPin(path="policy.json", sha256=hashlib.sha256(data).hexdigest())


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


def send(
    url: str,
    path: str,
    body: bytes | None,
    headers: dict[str, str],
    method: str = "POST",
    chunked: bool = False,
) -> Answer:
    """One request with a real HTTP client; ``chunked`` sends the body in chunked transfer coding."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        if chunked and body is not None:
            pieces = [body[i : i + 1000] for i in range(0, len(body), 1000)]
            connection.request(method, path, body=iter(pieces), headers=headers, encode_chunked=True)
        else:
            connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
    finally:
        connection.close()


def post(url: str, path: str, body: Any, key: str | None = KEY, chunked: bool = False) -> Answer:
    """POST JSON with the headers Claude Code sends."""
    headers = {"content-type": "application/json", "anthropic-version": "2023-06-01"}
    if key is not None:
        headers["x-api-key"] = key
    return send(url, path, json.dumps(body).encode(), headers, chunked=chunked)


def request_body(words: str, stream: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "model": MODEL,
        "max_tokens": 1024,
        "stream": stream,
        "system": [{"type": "text", "text": "You are a coding agent."}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": words}]}],
        **extra,
    }
