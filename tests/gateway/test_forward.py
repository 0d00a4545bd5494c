"""Forward mode against the provider double: relay, per-arm metering in exact decimals, caps, provider errors."""

from __future__ import annotations

import json
import socket
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from loopback import (
    KEY,
    KEY_ENV,
    MODEL,
    OTHER_KEY,
    PRICE,
    PROVIDER_KEY,
    AnthropicDouble,
    Fault,
    ForwardFactory,
    Reply,
    Usage,
    arm,
    caps,
    cost_of,
    post,
    request_body,
    send,
    tool_loop,
)
from pydantic import ValidationError

from bench.agent.recorder import StoreRecorder, read_exchange_log
from bench.gateway import (
    ChargeBasis,
    DirectoryRecorder,
    ForwardTerms,
    Gateway,
    GatewayConfig,
    GatewayError,
    Mode,
    Refusal,
    read_exchanges,
)
from bench.gateway.dialects.anthropic import assemble_message
from bench.gateway.stream import SseDecoder
from bench.store import Store


def _usage_of(record_body: object) -> dict[str, int]:
    assert isinstance(record_body, dict)
    return {k: v for k, v in record_body["usage"].items() if isinstance(v, int)}


def test_relays_streams_and_meters_each_arm_exactly(
    double: AnthropicDouble, forward_gateway: ForwardFactory, tmp_path: Path
) -> None:
    ledger: list[Decimal] = []
    double.on_bill = ledger.append
    with forward_gateway() as gateway:
        streamed = post(gateway.url, "/v1/messages?beta=true", request_body("first"))
        whole = post(gateway.url, "/v1/messages", request_body("second", stream=False), key=OTHER_KEY)
        again = post(gateway.url, "/v1/messages?beta=true", request_body("third"))
    assert streamed.status == 200 and streamed.headers["content-type"].startswith("text/event-stream")
    assert assemble_message(SseDecoder().feed(streamed.body))["content"][0]["text"] == "a short answer from the model"
    assert whole.status == 200 and whole.json["stop_reason"] == "end_turn" and again.status == 200
    records = read_exchanges(tmp_path / "log")
    assert [r.arm for r in records] == ["one", "two", "one"]
    for record in records:  # the gateway's Price and the double's own arithmetic agree to the last digit
        assert record.charge is ChargeBasis.USAGE and record.usage is not None
        assert record.cost_usd == PRICE.cost(record.usage) == cost_of(_usage_of(record.response_body))
    assert records[2].usage is not None and records[2].usage.cache_read_input_tokens > 0  # a cache read, priced
    spending = {spend.arm: spend for spend in gateway.spending()}
    assert spending["one"].spent_usd == records[0].cost_usd + records[2].cost_usd == gateway.spent("one")
    assert spending["two"].spent_usd == records[1].cost_usd and spending["two"].cap_usd == Decimal(1)
    assert sum(ledger) == double.billed_usd == spending["one"].spent_usd + spending["two"].spent_usd  # drain = declared
    sent = [(r.headers.get("x-api-key"), r.headers.get("authorization")) for r in double.received]
    assert sent == [(PROVIDER_KEY, None)] * 3  # the provider saw its key, never an arm's
    assert json.loads(double.received[0].body) == request_body("first")


def test_openrouter_shape_bearer_key_and_base_path(double: AnthropicDouble, forward_gateway: ForwardFactory) -> None:
    double.auth, double.prefix = "bearer", "/api"
    with forward_gateway(bearer=True) as gateway:
        assert post(gateway.url, "/v1/messages?beta=true", request_body("hi")).status == 200
    received = double.received[0]
    assert received.path == "/api/v1/messages?beta=true"
    assert received.headers["authorization"] == f"Bearer {PROVIDER_KEY}" and "x-api-key" not in received.headers


def test_a_chunked_request_reaches_the_provider_whole(
    double: AnthropicDouble, forward_gateway: ForwardFactory, tmp_path: Path
) -> None:
    body = request_body("y" * 20_000)
    with forward_gateway() as gateway:
        assert post(gateway.url, "/v1/messages", body, chunked=True).status == 200
    assert json.loads(double.received[0].body) == body
    assert read_exchanges(tmp_path / "log")[0].request_body == body


def test_answers_without_usage_are_charged_their_upper_bound_and_the_cap_trips(
    double: AnthropicDouble, forward_gateway: ForwardFactory, tmp_path: Path
) -> None:
    """Issue 17 item 10: 20 answers without usage used to cost $0.00 and never trip the cap."""
    double.usage = Usage.OMITTED
    statuses = []
    with forward_gateway(cap_one="0.25") as gateway:  # about $0.03 an upper bound: 8 answers
        for turn in range(20):
            statuses.append(post(gateway.url, "/v1/messages?beta=true", request_body(f"turn {turn}")).status)
    records = read_exchanges(tmp_path / "log")
    answered = [r for r in records if r.status == 200]
    assert 1 < len(answered) < 20 and statuses[len(answered) :] == [400] * (20 - len(answered))
    assert all(r.charge is ChargeBasis.UPPER_BOUND and r.usage is None for r in answered)
    assert all(r.refusal is Refusal.CAP_REACHED for r in records[len(answered) :])
    assert answered[0].cost_usd == PRICE.upper_bound(len(double.received[0].body), 1024)
    spend = next(s for s in gateway.spending() if s.arm == "one")
    assert spend.cap_reached and spend.upper_bound_answers == len(answered) and spend.cap_refusals == 20 - len(answered)
    assert spend.spent_usd >= double.billed_usd  # the bound covers what the account was really billed
    assert len(double.received) == len(answered)  # nothing past the cap reached the provider


@pytest.mark.parametrize("fault", [Usage.MALFORMED, Fault.ERROR_EVENT, Fault.CUT])
def test_unreadable_or_unfinished_usage_fails_closed(
    fault: Usage | Fault, double: AnthropicDouble, forward_gateway: ForwardFactory, tmp_path: Path
) -> None:
    if isinstance(fault, Usage):
        double.usage = fault
    else:
        double.faults = [fault]
    with forward_gateway() as gateway:
        answer = post(gateway.url, "/v1/messages?beta=true", request_body("hi"))
    record = read_exchanges(tmp_path / "log")[0]
    assert answer.status == 200 and record.charge is ChargeBasis.UPPER_BOUND and record.usage is None
    assert record.cost_usd == gateway.spent("one") == PRICE.upper_bound(len(double.received[0].body), 1024)
    assert record.response_events is not None and record.response_events == tuple(SseDecoder().feed(answer.body))


def test_the_cap_stops_an_arm_whose_model_keeps_asking_for_more_turns(
    double: AnthropicDouble, forward_gateway: ForwardFactory, tmp_path: Path
) -> None:
    """An agent loop: each answer asks for a tool call, each tool result goes back, until the gateway refuses the
    first request whose worst case (about $0.18 here, for about $0.03 billed a turn) does not fit what is left."""
    double.model = tool_loop
    body = request_body("start " + "z" * 40_000)
    with forward_gateway(cap_one="0.5") as gateway:
        for _ in range(100):
            answer = post(gateway.url, "/v1/messages", {**body, "stream": False})
            if answer.status != 200:
                break
            call = answer.json["content"][0]
            result = {"type": "tool_result", "tool_use_id": call["id"], "content": "ok"}
            body["messages"] += [
                {"role": "assistant", "content": answer.json["content"]},
                {"role": "user", "content": [result]},
            ]
        other = post(gateway.url, "/v1/messages", request_body("the other arm"), key=OTHER_KEY)
    assert answer.status == 400 and answer.json["error"]["type"] == "invalid_request_error"
    assert "spending cap" in answer.json["error"]["message"] and other.status == 200  # each arm's cap is its own
    records = [r for r in read_exchanges(tmp_path / "log") if r.arm == "one"]
    spent = sum((r.cost_usd for r in records), Decimal(0))
    assert records[-1].refusal is Refusal.CAP_REACHED and records[-1].cost_usd == 0
    refused = len(json.dumps(records[-1].request_body).encode())  # the refused request's size, as sent
    assert spent == gateway.spent("one") <= Decimal("0.5") < spent + PRICE.upper_bound(refused, 1024)
    assert len(records) > 3  # it ran several turns before the cap
    assert len([r for r in double.received if r.headers.get("x-api-key")]) == len(records)  # 1 refused + 1 other


def test_provider_errors_are_relayed_with_their_headers_and_not_charged(
    double: AnthropicDouble, forward_gateway: ForwardFactory, tmp_path: Path
) -> None:
    double.faults = [Fault.RATE_LIMITED, Fault.OVERLOADED]
    double.keys = frozenset({"sk-some-other-key"})
    with forward_gateway() as gateway:
        rejected = post(gateway.url, "/v1/messages", request_body("hi"))
        double.keys = frozenset({PROVIDER_KEY})
        limited = post(gateway.url, "/v1/messages", request_body("hi"))
        overloaded = post(gateway.url, "/v1/messages?beta=true", request_body("hi"))
    assert rejected.status == 401 and rejected.json["error"]["type"] == "authentication_error"
    assert limited.status == 429 and limited.headers["retry-after"] == "7" and "request-id" in limited.headers
    assert limited.json["error"]["type"] == "rate_limit_error"
    assert overloaded.status == 529 and overloaded.json["error"]["type"] == "overloaded_error"
    records = read_exchanges(tmp_path / "log")
    assert [(r.status, r.charge, r.refusal) for r in records] == [
        (401, ChargeBasis.NOT_BILLED, None),
        (429, ChargeBasis.NOT_BILLED, None),
        (529, ChargeBasis.NOT_BILLED, None),
    ]
    assert gateway.spent("one") == 0 and PROVIDER_KEY not in rejected.body.decode()


def test_requests_it_cannot_meter_are_refused_before_anything_is_spent(
    double: AnthropicDouble, forward_gateway: ForwardFactory, tmp_path: Path
) -> None:
    with forward_gateway() as gateway:
        unpriced = post(gateway.url, "/v1/messages", {**request_body("hi"), "model": "unknown-model"})
        unbounded = post(gateway.url, "/v1/messages", {**request_body("hi"), "max_tokens": None})
        listed = post(gateway.url, "/v1/messages", [1, 2])
        counted = post(gateway.url, "/v1/messages/count_tokens", {"model": MODEL, "messages": []})
    assert unpriced.status == 400 and "not available" in unpriced.json["error"]["message"]
    assert unbounded.status == 400 and "max_tokens" in unbounded.json["error"]["message"]
    assert listed.status == 400 and counted.status == 200 and counted.json["input_tokens"] >= 0
    records = read_exchanges(tmp_path / "log")
    assert [r.refusal for r in records] == [Refusal.UNPRICED_MODEL, Refusal.BAD_BODY, Refusal.BAD_BODY, None]
    assert records[3].charge is ChargeBasis.NOT_BILLED and gateway.spent("one") == 0
    assert [r.path for r in double.received] == ["/v1/messages/count_tokens"]


def test_unreachable_upstream_is_a_502_api_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(KEY_ENV, PROVIDER_KEY)
    config = GatewayConfig(
        mode=Mode.FORWARD, arms=(arm("one", KEY),), upstream="http://127.0.0.1:9",
        forward=ForwardTerms(key_env=KEY_ENV, prices={MODEL: PRICE}), caps=caps(one="1"),
    )  # fmt: skip
    with Gateway(config, DirectoryRecorder(tmp_path)) as gateway:
        answer = post(gateway.url, "/v1/messages", request_body("hi"))
    assert answer.status == 502 and answer.json["error"]["type"] == "api_error"
    record = read_exchanges(tmp_path)[0]
    assert record.refusal is Refusal.UPSTREAM_UNREACHABLE and record.charge is ChargeBasis.NOT_BILLED
    assert PROVIDER_KEY not in answer.body.decode()


def test_forward_mode_needs_the_key_by_name_and_a_cap_for_every_arm(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("ABSENT_KEY", raising=False)
    base = {"mode": Mode.FORWARD, "arms": (arm("one", KEY),), "upstream": "http://127.0.0.1:9"}
    terms = {"key_env": "ABSENT_KEY", "prices": {"m": PRICE}}
    config = GatewayConfig(**base, forward=terms, caps=caps(one="1"))  # type: ignore[arg-type]
    with pytest.raises(GatewayError, match=r"\$ABSENT_KEY"):
        Gateway(config, DirectoryRecorder(tmp_path))
    with pytest.raises(ValidationError, match=r"none for \['one'\]"):
        GatewayConfig(**base, forward=terms, caps=caps(two="1"))  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="needs `forward`"):
        GatewayConfig(**base, caps=caps(one="1"))  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"forward\.key_env"):
        pasted = {**terms, "key_env": "sk-ant-pasted-key!"}
        GatewayConfig(**base, forward=pasted, caps=caps(one="1"))  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="spends nothing"):
        pin = {"path": "p", "sha256": "0" * 64}
        GatewayConfig(mode=Mode.POLICY, arms=(arm("one", KEY),), policy=pin, caps=caps(one="1"))  # type: ignore[arg-type]


def test_no_key_reaches_the_store(double: AnthropicDouble, forward_gateway: ForwardFactory, tmp_path: Path) -> None:
    """Planted: the provider key in the environment, two arm keys and a stranger's; searched for in every object."""
    store = Store(tmp_path / "store")
    recorder = StoreRecorder(store)
    double.faults = [Fault.RATE_LIMITED]
    with forward_gateway(recorder=recorder) as gateway:
        post(gateway.url, "/v1/messages", request_body("hi"))
        post(gateway.url, "/v1/messages?beta=true", request_body("hi"), key=OTHER_KEY)
        post(gateway.url, "/v1/messages", request_body("hi"), key="sk-stranger-key")
        bearer = {"authorization": f"Bearer {KEY}", "anthropic-version": "2023-06-01"}
        send(gateway.url, "/v1/messages", json.dumps(request_body("hi")).encode(), bearer)
        stored_spending = store.put_document(gateway.spending()[0])
    log = recorder.finish()
    assert len(read_exchange_log(store, log)) == 4 and store.has(stored_spending)
    planted = [PROVIDER_KEY, KEY, OTHER_KEY, "sk-stranger-key"]
    objects = [store.get_bytes(digest) for digest in store.digests()]
    files = [path.read_bytes() for path in (tmp_path / "store").rglob("*") if path.is_file()]
    assert len(objects) > 4
    for secret in planted:
        assert not any(secret.encode() in data for data in objects + files), secret


def test_a_client_gone_mid_stream_is_recorded_and_the_answer_still_metered_from_its_usage(
    double: AnthropicDouble, forward_gateway: ForwardFactory, tmp_path: Path
) -> None:
    double.pace = 0.05
    double.model = lambda body: Reply(({"type": "text", "text": "a long answer " * 20},))
    with forward_gateway() as gateway:
        parts = urlsplit(gateway.url)
        with socket.create_connection((parts.hostname, parts.port), timeout=10) as connection:
            data = json.dumps(request_body("hi")).encode()
            head = f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: {KEY}\r\nanthropic-version: 2023-06-01\r\n"
            connection.sendall(f"{head}content-length: {len(data)}\r\n\r\n".encode() + data)
            assert connection.recv(12) == b"HTTP/1.1 200"  # the stream began; the client leaves
    record = read_exchanges(tmp_path / "log")[0]
    assert record.client_disconnected and record.charge is ChargeBasis.USAGE
    assert record.response_events is not None and record.response_events[-1].event == "message_stop"
    assert record.cost_usd == gateway.spent("one") == double.billed_usd


def test_a_provider_silent_after_taking_the_request_is_a_502_charged_its_upper_bound(
    double: AnthropicDouble, forward_gateway: ForwardFactory, tmp_path: Path
) -> None:
    double.faults = [Fault.SILENT]
    with forward_gateway() as gateway:
        answer = post(gateway.url, "/v1/messages", request_body("hi"))
    record = read_exchanges(tmp_path / "log")[0]
    assert answer.status == 502 and record.refusal is Refusal.UPSTREAM_UNREACHABLE
    assert record.charge is ChargeBasis.UPPER_BOUND and record.cost_usd == gateway.spent("one") >= double.billed_usd > 0
