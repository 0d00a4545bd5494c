"""The gateway: an HTTP server speaking the Anthropic Messages API that records every exchange.

Routes: ``POST /v1/messages`` (any query, e.g. Claude Code's ``?beta=true``; streamed when the body asks) and
``POST /v1/messages/count_tokens``. Anything else gets an Anthropic-shaped 404 and is recorded too. The arm
is identified by the SHA-256 of the key its client presents; an unknown key is refused with 401.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

from .config import GatewayConfig, Mode
from .errors import GatewayError
from .exchange import ExchangeRecord, Recorder
from .forward import UpstreamProvider
from .metering import Meter, TokenUsage
from .policy import Policy, load_policy
from .wire import api_error, encode_sse, message_events

__all__ = ["Gateway"]

_MESSAGES = "/v1/messages"
_COUNT_TOKENS = "/v1/messages/count_tokens"
_RECORDED_HEADERS_DROPPED = frozenset({"x-api-key", "authorization"})


@dataclass
class _Answer:
    """What the gateway sent back, for the record."""

    status: int
    body: Any
    streamed: bool = False
    rule: str | None = None
    usage: TokenUsage | None = None
    cost: Decimal = Decimal(0)


def _estimate_tokens(value: Any) -> int:
    """A deterministic stand-in count for policy mode (about four characters a token)."""
    return len(json.dumps(value, separators=(",", ":"))) // 4 + 1


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_POST(self) -> None:
        self.server.gateway.serve(self)

    do_GET = do_HEAD = do_PUT = do_DELETE = do_POST

    def log_message(self, format: str, *args: Any) -> None:  # the exchange log is the record, not stderr
        return

    def send_json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def begin_stream(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def write(self, data: bytes) -> None:
        self.wfile.write(data)
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # server_close() joins the request threads, so a stopped gateway's log is complete

    def __init__(self, address: tuple[str, int], gateway: Gateway) -> None:
        super().__init__(address, _Handler)
        self.gateway = gateway


class Gateway:
    """Serve one configuration until stopped; use as a context manager or call start/stop."""

    def __init__(self, config: GatewayConfig, recorder: Recorder, *, policy_root: Path | None = None) -> None:
        self.config = config
        self._recorder = recorder
        self._meter = Meter(config.arms)
        self._labels = {arm.key_sha256: arm.label for arm in config.arms}
        self._sequence = itertools.count()
        self._sequence_lock = threading.Lock()
        self._policy: Policy | None = None
        self._upstream: UpstreamProvider | None = None
        if config.policy is not None:
            self._policy = load_policy((policy_root or Path.cwd()) / config.policy.path, config.policy.sha256)
        if config.mode is Mode.FORWARD:
            key = os.environ.get(config.upstream_key_env)
            if not key:
                raise GatewayError(f"forward mode needs the provider key in ${config.upstream_key_env}; it is unset")
            self._upstream = UpstreamProvider(config.upstream or "", key)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listen and serve in a background thread; returns the base URL clients use."""
        try:
            self._server = _Server((host, port), self)
        except OSError as exc:
            raise GatewayError(f"cannot listen on {host}:{port}: {exc.strerror}; pick a free port") from exc
        self._thread = threading.Thread(target=self._server.serve_forever, name="gateway", daemon=True)
        self._thread.start()
        return self.url

    @property
    def url(self) -> str:
        if self._server is None:
            raise GatewayError("the gateway is not started; call start() first")
        host, port = self._server.server_address[:2]
        shown = host.decode() if isinstance(host, bytes) else host
        return f"http://{shown}:{port}"

    def stop(self) -> None:
        """Stop listening and wait for requests in flight: once this returns, every exchange is recorded."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        if self._server is None:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def spent(self, label: str) -> Decimal:
        return self._meter.spent(label)

    def serve(self, request: _Handler) -> None:
        """Answer one HTTP request and record it, whatever happens while answering."""
        with self._sequence_lock:
            sequence = next(self._sequence)
        started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        clock = time.monotonic()
        raw = request.rfile.read(int(request.headers.get("content-length") or 0))
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        arm = self._arm_of(request)
        answer = _Answer(500, api_error("api_error", "the gateway failed while answering"))
        try:
            answer = self._answer(request, arm, body, raw)
        finally:
            headers = {k.lower(): v for k, v in request.headers.items() if k.lower() not in _RECORDED_HEADERS_DROPPED}
            self._recorder.record(
                ExchangeRecord(
                    sequence=sequence,
                    arm=arm,
                    method=request.command,
                    path=request.path,
                    request_headers=headers,
                    request_body=body,
                    status=answer.status,
                    streamed=answer.streamed,
                    response_body=answer.body,
                    rule=answer.rule,
                    usage=answer.usage,
                    cost_usd=answer.cost,
                    started_at=started_at,
                    duration_ms=int((time.monotonic() - clock) * 1000),
                )
            )

    def _arm_of(self, request: _Handler) -> str | None:
        key = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ")
        return self._labels.get(hashlib.sha256(key.encode()).hexdigest()) if key else None

    def _answer(self, request: _Handler, arm: str | None, body: Any, raw: bytes) -> _Answer:
        route = request.path.split("?", 1)[0]
        if route == "/" and request.command in ("GET", "HEAD"):  # the CLI's connectivity probe, sent without a key
            request.send_json(200, {})
            return _Answer(200, {})
        if arm is None:
            return self._refuse(request, 401, "authentication_error", "invalid x-api-key")
        if request.command != "POST" or route not in (_MESSAGES, _COUNT_TOKENS):
            return self._refuse(request, 404, "not_found_error", f"{request.command} {route} is not served here")
        if not isinstance(body, dict):
            return self._refuse(request, 400, "invalid_request_error", "the request body must be a JSON object")
        if self._upstream is not None:
            return self._forward(request, arm, body, raw)
        if route == _COUNT_TOKENS:
            answer = {"input_tokens": _estimate_tokens(body)}
            request.send_json(200, answer)
            return _Answer(200, answer)
        return self._from_policy(request, body)

    @staticmethod
    def _refuse(request: _Handler, status: int, error_type: str, message: str) -> _Answer:
        error = api_error(error_type, message)
        request.send_json(status, error)
        return _Answer(status, error)

    def _from_policy(self, request: _Handler, body: dict[str, Any]) -> _Answer:
        assert self._policy is not None  # the config validator guarantees a policy in policy mode
        rule, message = self._policy.answer(body)
        message["usage"] = {
            "input_tokens": _estimate_tokens(body),
            "output_tokens": _estimate_tokens(message["content"]),
        }
        if body.get("stream"):
            request.begin_stream()
            for event, data in message_events(message):
                request.write(encode_sse(event, data))
        else:
            request.send_json(200, message)
        return _Answer(200, message, bool(body.get("stream")), rule, TokenUsage.of(message["usage"]))

    def _forward(self, request: _Handler, arm: str, body: dict[str, Any], raw: bytes) -> _Answer:
        assert self._upstream is not None
        price = self.config.prices.get(str(body.get("model")))
        if price is None:
            known = ", ".join(sorted(self.config.prices))
            return self._refuse(
                request,
                400,
                "invalid_request_error",
                f"model {body.get('model')!r} is not available; available: {known}",
            )
        if self._meter.over_cap(arm):
            spent, cap = self._meter.spent(arm), self._meter.cap(arm)
            message = (
                f"This API key has reached its spending cap: ${spent:.4f} spent of ${cap:.4f}. "
                "No further requests are accepted."
            )
            return self._refuse(request, 400, "invalid_request_error", message)
        relayed = self._upstream.relay(request, "POST", request.path, dict(request.headers.items()), raw)
        # count_tokens answers carry no `usage`, so only real completions are charged
        cost = price.cost(relayed.usage) if relayed.usage is not None else Decimal(0)
        self._meter.charge(arm, cost)
        return _Answer(relayed.status, relayed.body, relayed.streamed, None, relayed.usage, cost)
