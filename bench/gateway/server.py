"""The gateway: an HTTP server speaking one API dialect (the config's) that records every exchange.

Routes are the dialect's: its model route (any query, e.g. Claude Code's ``/v1/messages?beta=true``; streamed when
the body asks) and, when the API has one, its token-counting route. The key is required on every path, as the
provider requires it: a request without a key no arm holds gets 401, and any other method or path a keyed request
asks for gets the API's 404. Every request is recorded, the refused ones too, with the reason
(:class:`~bench.gateway.exchange.Refusal`). Policy mode reads each request as the neutral conversation, so a
policy answers the same conversation the same way in every dialect.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Self

from ..contracts import Sha256, environment_value
from .body import UnreadableBody, read_body
from .config import GatewayConfig, Mode
from .dialects import Dialect, ErrorKind, UnreadableRequest, dialect_of
from .errors import GatewayError
from .exchange import ExchangeRecord, Recorder, Refusal
from .forward import Relayed, UpstreamProvider
from .handler import Handler, Server
from .metering import ArmSpend, ArmStop, ChargeBasis, Meter, Price, TokenUsage, within_bounds
from .neutral import HarnessHooks
from .policy import Policy, load_policy
from .stream import StreamEvent, encode_sse

__all__ = ["Gateway"]

_RECORDED_HEADERS_DROPPED = frozenset({"x-api-key", "authorization", "proxy-authorization", "cookie"})


@dataclass
class _Answer:
    """What the gateway sent back, for the record."""

    status: int
    body: Any
    streamed: bool = False
    rule: str | None = None
    usage: TokenUsage | None = None
    cost: Decimal = Decimal(0)
    charge: ChargeBasis = ChargeBasis.NOT_BILLED
    refusal: Refusal | None = None
    events: tuple[StreamEvent, ...] | None = None
    worst_case: Decimal | None = None  # forward mode: what the request could cost, held against the cap or refused


def _parse(raw: bytes | UnreadableBody) -> Any:
    if not isinstance(raw, bytes) or not raw:
        return None
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: a body nested past Python's stack, kept as text
        return raw.decode("utf-8", "replace")
    return parsed


class Gateway:
    """Serve one configuration until stopped; use as a context manager or call start/stop."""

    def __init__(
        self,
        config: GatewayConfig,
        recorder: Recorder,
        *,
        policy_root: Path | None = None,
        hooks: HarnessHooks | None = None,
    ) -> None:
        """``hooks``: the arm's harness, naming the policy's tool calls as its client runs them and telling what
        each request is for (a compaction is recorded as one)."""
        self.config = config
        self.dialect: Dialect = dialect_of(config.dialect)
        self._hooks = hooks
        self._recorder = recorder
        self._meter = Meter([arm.label for arm in config.arms], config.caps, config.provider_error_limit)
        self._labels = {arm.key_sha256: arm.label for arm in config.arms}
        self._sequence = itertools.count()
        self._sequence_lock = threading.Lock()
        self._policy: Policy | None = None
        self._upstream: UpstreamProvider | None = None
        if config.policy is not None:
            self._policy = load_policy((policy_root or Path.cwd()) / config.policy.path, config.policy.sha256)
        if config.mode is Mode.FORWARD:
            key = environment_value(config.upstream_key_env, "forward mode's provider key", error=GatewayError)
            self._upstream = UpstreamProvider(config.upstream or "", key, config.upstream_auth, self.dialect)
        self._server: Server | None = None
        self._thread: threading.Thread | None = None

    def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listen and serve in a background thread; returns the base URL clients use."""
        try:
            self._server = Server((host, port), self)
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
        """What arm ``label`` has been charged so far, exactly."""
        return self._meter.spent(label)

    def spending(self) -> tuple[ArmSpend, ...]:
        """Each arm's spending, cap and refusals so far (complete once :meth:`stop` returned)."""
        return self._meter.report()

    def serve(self, request: Handler) -> None:
        """Answer one HTTP request and record it, whatever happens while answering."""
        with self._sequence_lock:
            sequence = next(self._sequence)
        started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        clock = time.monotonic()
        raw = read_body(request.headers, request.rfile)  # type: ignore[arg-type]  # a buffered reader is binary IO
        body = _parse(raw)
        arm = self._arm_of(request)
        answer = _Answer(500, self.dialect.error_body(ErrorKind.SERVER, "Internal server error"))
        try:
            answer = self._answer(request, arm, raw, body)
        finally:
            headers = {k.lower(): v for k, v in request.headers.items() if k.lower() not in _RECORDED_HEADERS_DROPPED}
            hooks = self._hooks
            kind = hooks.request_kind(headers, body) if hooks is not None and isinstance(body, dict) else None
            is_model = request.command == "POST" and self._route(request) == self.dialect.model_path
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
                    request_sha256=Sha256.of(raw) if isinstance(raw, bytes) else None,
                    response_events=answer.events,
                    charge=answer.charge,
                    refusal=answer.refusal,
                    chain=self.dialect.chain(body, answer.body) if is_model and isinstance(body, dict) else None,
                    client_disconnected=request.client_gone,
                    worst_case_usd=answer.worst_case,
                    request_kind=kind,
                    dialect=self.dialect.name,
                )
            )

    @staticmethod
    def _route(request: Handler) -> str:
        return request.path.split("?", 1)[0]

    def _arm_of(self, request: Handler) -> str | None:
        key = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ")
        return self._labels.get(hashlib.sha256(key.encode()).hexdigest()) if key else None

    def _answer(self, request: Handler, arm: str | None, raw: bytes | UnreadableBody, body: Any) -> _Answer:
        route, dialect = self._route(request), self.dialect
        if isinstance(raw, UnreadableBody):
            request.close_connection = True  # where the next request would start is unknown
        if arm is None:
            presented = request.headers.get("x-api-key") or request.headers.get("authorization")
            message = dialect.key_message(bool(presented))
            return self._refuse(request, Refusal.NO_KEY, 401, ErrorKind.AUTHENTICATION, message)
        if request.command != "POST" or route not in (dialect.model_path, dialect.count_path):
            return self._refuse(request, Refusal.NOT_FOUND, 404, ErrorKind.NOT_FOUND, "Not Found")
        if isinstance(raw, UnreadableBody):
            if raw.too_large:
                return self._refuse(request, Refusal.TOO_LARGE, 413, ErrorKind.TOO_LARGE, raw.message)
            return self._refuse(request, Refusal.BAD_BODY, 400, ErrorKind.INVALID_REQUEST, raw.message)
        rejection = dialect.reject(route, {k.lower(): v for k, v in request.headers.items()}, body)
        if rejection is not None:
            refusal = Refusal.NO_API_VERSION if rejection.missing_version else Refusal.BAD_BODY
            return self._refuse(request, refusal, 400, ErrorKind.INVALID_REQUEST, rejection.message)
        if not isinstance(body, dict):
            message = "the request body must be a JSON object"
            return self._refuse(request, Refusal.BAD_BODY, 400, ErrorKind.INVALID_REQUEST, message)
        if self._upstream is not None:
            return self._forward(request, arm, route, raw, body)
        if route == dialect.count_path:
            answer = dialect.count_tokens(body)
            request.send_json(200, answer)
            return _Answer(200, answer)
        return self._from_policy(request, body)

    def _refuse(self, request: Handler, refusal: Refusal, status: int, kind: ErrorKind, message: str) -> _Answer:
        error = self.dialect.error_body(kind, message)
        request.send_json(status, error)
        return _Answer(status, error, refusal=refusal)

    def _from_policy(self, request: Handler, body: dict[str, Any]) -> _Answer:
        assert self._policy is not None  # the config validator guarantees a policy in policy mode
        try:
            rule, message, usage = self.dialect.answer(self._policy, body, self._hooks)
        except UnreadableRequest as exc:
            return self._refuse(request, Refusal.BAD_BODY, 400, ErrorKind.INVALID_REQUEST, exc.message)
        if not self.dialect.streams(body):
            request.send_json(200, message)
            return _Answer(200, message, False, rule, usage)
        request.begin_stream(200, [])
        events = []
        for event, data in self.dialect.events(message):
            request.write(encode_sse(event, data))
            events.append(StreamEvent(event=event, data=data))
        return _Answer(200, message, True, rule, usage, events=tuple(events))

    def _forward(self, request: Handler, arm: str, route: str, raw: bytes, body: dict[str, Any]) -> _Answer:
        assert self._upstream is not None
        price = self.config.prices.get(str(body.get("model")))
        if price is None:
            known = ", ".join(sorted(self.config.prices))
            message = f"model: {body.get('model')!r} is not available; available models: {known}"
            return self._refuse(request, Refusal.UNPRICED_MODEL, 400, ErrorKind.INVALID_REQUEST, message)
        counting = route != self.dialect.model_path
        max_tokens = 0 if counting else self.dialect.output_bound(body)
        if max_tokens is None:  # a dialect whose API does not require a bound: without one, no cap can hold
            message = f"{self.dialect.output_field}: a positive integer is required to bound the request's cost"
            return self._refuse(request, Refusal.BAD_BODY, 400, ErrorKind.INVALID_REQUEST, message)
        worst = Decimal(0) if counting else price.upper_bound(len(raw), max_tokens)
        spend = self._meter.admit(arm, worst)
        if spend is not None:
            return replace(self._refuse_held(request, spend, worst), worst_case=worst)
        charged: list[tuple[ChargeBasis, Decimal]] = []

        def decided(relayed: Relayed) -> None:  # before the client has the whole answer: see forward.py
            charge, cost = _charge(counting, relayed, price, len(raw), max_tokens)
            self._meter.settle(arm, worst, cost, charge, self._failed(relayed))
            charged.append((charge, cost))

        try:
            relayed = self._upstream.relay(request, "POST", request.path, dict(request.headers.items()), raw, decided)
        finally:
            if not charged:  # the relay failed before the answer was decided: sent, so perhaps billed
                self._meter.settle(arm, worst, worst, ChargeBasis.UPPER_BOUND, provider_error=True)
        charge, cost = charged[0]
        refusal = Refusal.UPSTREAM_UNREACHABLE if relayed.unreachable else None
        return _Answer(
            relayed.status,
            relayed.body,
            relayed.streamed,
            None,
            relayed.usage,
            cost,
            charge,
            refusal,
            relayed.events,
            worst,
        )

    def _refuse_held(self, request: Handler, spend: ArmSpend, worst: Decimal) -> _Answer:
        """Refuse a request the meter did not admit: its arm was stopped, or its worst case does not fit the cap."""
        if spend.stop is ArmStop.PROVIDER_FAILED:
            message = "The model endpoint failed repeatedly. No further requests are accepted."
            return self._refuse(request, Refusal.PROVIDER_FAILED, 400, ErrorKind.INVALID_REQUEST, message)
        if spend.stop is ArmStop.PROVIDER_MALFORMED:
            message = "The model endpoint reported an impossible usage. No further requests are accepted."
            return self._refuse(request, Refusal.PROVIDER_MALFORMED, 400, ErrorKind.INVALID_REQUEST, message)
        message = (
            f"This API key has reached its spending cap: ${spend.spent_usd:.4f} spent of ${spend.cap_usd:.4f}, "
            f"and this request could cost up to ${worst:.4f}. No further requests are accepted."
        )
        return self._refuse(request, Refusal.CAP_REACHED, 400, ErrorKind.INVALID_REQUEST, message)

    def _failed(self, relayed: Relayed) -> bool:
        """The provider failed this request: it refused the key or the rate, erred, could not be reached, or cut its
        stream short. A refusal of the request itself (400, 404, 413) is the client's, not the provider's."""
        if relayed.unreachable or relayed.status in (401, 403, 429) or relayed.status >= 500:
            return True
        return relayed.status == 200 and relayed.streamed and not self.dialect.finished(relayed.events or ())


def _charge(
    counting: bool, relayed: Relayed, price: Price, request_bytes: int, max_tokens: int
) -> tuple[ChargeBasis, Decimal]:
    """What one relayed answer costs: its usage, or its upper bound when it may be billed but reports no usage, or
    a usage its request cannot have produced."""
    if counting or not relayed.billable:
        return ChargeBasis.NOT_BILLED, Decimal(0)  # count_tokens is free; an error answer is not billed
    bound = price.upper_bound(request_bytes, max_tokens)
    if relayed.usage is None:
        return ChargeBasis.UPPER_BOUND, bound
    if not within_bounds(relayed.usage, request_bytes, max_tokens):
        return ChargeBasis.OUT_OF_BOUNDS, bound
    return ChargeBasis.USAGE, price.cost(relayed.usage)
