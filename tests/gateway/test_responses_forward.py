"""Forward mode in the Responses dialect: a gateway relays to a provider double implementing the Responses API on a
real socket, meters each answer from its own usage exactly as the provider bills it, and fails closed on answers
it cannot meter."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from loopback import KEY, KEY_ENV, OTHER_KEY, PRICE, PROVIDER_KEY, arm, caps, send
from responses_double import (
    Fault,
    ResponsesDouble,
    call,
    codex_headers,
    responses_body,
    serve_responses,
    user,
)

from bench.contracts.api_dialect import ApiDialect
from bench.gateway import (
    ArmStop,
    ChargeBasis,
    DirectoryRecorder,
    ExchangeRecord,
    ForwardTerms,
    Gateway,
    GatewayConfig,
    Mode,
    Refusal,
    UpstreamAuth,
    read_exchanges,
)
from bench.gateway.dialects import dialect_of
from bench.gateway.stream import SseDecoder

MODEL = "gpt-5.5"
RESPONSES = dialect_of(ApiDialect.OPENAI_RESPONSES)


@contextmanager
def _forwarding(
    double: ResponsesDouble, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cap: str = "1"
) -> Iterator[Gateway]:
    monkeypatch.setenv(KEY_ENV, PROVIDER_KEY)
    with serve_responses(double) as url:
        config = GatewayConfig(
            mode=Mode.FORWARD,
            dialect=ApiDialect.OPENAI_RESPONSES,
            arms=(arm("one", KEY), arm("two", OTHER_KEY)),
            upstream=url,
            forward=ForwardTerms(key_env=KEY_ENV, upstream_auth=UpstreamAuth.BEARER, prices={MODEL: PRICE}),
            caps=caps(one=cap, two="1"),
        )
        with Gateway(config, DirectoryRecorder(tmp_path / "log")) as gateway:
            yield gateway


def _post(gateway: Gateway, body: dict[str, Any], key: str = KEY) -> Any:
    return send(gateway.url, "/v1/responses", json.dumps(body).encode(), codex_headers(key))


def _bounded(*items: dict[str, Any], stream: bool = True) -> dict[str, Any]:
    return responses_body(*items, stream=stream, model=MODEL, max_output_tokens=2048)


def _records(gateway: Gateway, tmp_path: Path) -> tuple[ExchangeRecord, ...]:
    gateway.stop()
    return read_exchanges(tmp_path / "log")


def test_streams_and_whole_answers_are_relayed_and_metered_as_the_provider_bills(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    double = ResponsesDouble()
    with _forwarding(double, tmp_path, monkeypatch) as gateway:
        streamed = _post(gateway, _bounded(user("hello")))
        whole = _post(gateway, _bounded(user("hello"), stream=False))
        records = _records(gateway, tmp_path)
        spent = gateway.spent("one")
    events = SseDecoder().feed(streamed.body)
    assert streamed.status == 200 and events[-1].event == "response.completed"
    assert "".join(str(e.data["delta"]) for e in events if e.event == "response.output_text.delta") == (  # type: ignore[index,call-overload]
        "a short answer from the model"
    )
    assert whole.status == 200 and whole.json["output"][0]["content"][0]["text"] == "a short answer from the model"
    assert [r.charge for r in records] == [ChargeBasis.USAGE, ChargeBasis.USAGE]
    assert records[1].usage is not None and records[1].usage.cache_read_input_tokens > 0  # the base prompt, cached
    assert sum(r.cost_usd for r in records) == spent == double.billed_usd > 0
    assert records[0].response_body == RESPONSES.assemble(events) and records[0].response_events == tuple(events)
    received = double.received[0]
    assert received["input"] == _bounded(user("hello"))["input"]
    assert "x-request-id" in whole.headers  # what a client quotes to the provider is passed back


def test_the_provider_sees_the_gateways_key_never_the_arms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    double = ResponsesDouble()
    with _forwarding(double, tmp_path, monkeypatch) as gateway:
        assert _post(gateway, _bounded(user("hi"))).status == 200
        assert _post(gateway, _bounded(user("hi")), key="sk-not-an-arm").status == 401
        records = _records(gateway, tmp_path)
    assert len(double.received) == 1 and KEY not in (tmp_path / "log" / "exchanges.jsonl").read_text()
    assert PROVIDER_KEY not in (tmp_path / "log" / "exchanges.jsonl").read_text()
    assert records[1].refusal is Refusal.NO_KEY


@pytest.mark.parametrize("fault", [Fault.FAILED, Fault.CUT, Fault.NO_USAGE])
def test_an_answer_without_a_complete_usage_is_charged_its_upper_bound(
    fault: Fault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    double = ResponsesDouble(faults=[fault])
    with _forwarding(double, tmp_path, monkeypatch) as gateway:
        answer = _post(gateway, _bounded(user("hi")))
        (record,) = _records(gateway, tmp_path)
    assert answer.status == 200 and record.charge is ChargeBasis.UPPER_BOUND and record.usage is None
    assert record.cost_usd == record.worst_case_usd == PRICE.upper_bound(len(json.dumps(_bounded(user("hi")))), 2048)


def test_consecutive_provider_failures_stop_the_arm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    double = ResponsesDouble(faults=[Fault.SERVER_ERROR, Fault.FAILED, Fault.CUT])
    with _forwarding(double, tmp_path, monkeypatch) as gateway:
        statuses = [_post(gateway, _bounded(user(f"try {n}"))).status for n in range(4)]
        records = _records(gateway, tmp_path)
        (one, _) = gateway.spending()
    assert statuses == [500, 200, 200, 400] and len(double.received) == 3
    assert records[0].response_body["error"]["type"] == "server_error"  # type: ignore[index,call-overload]
    assert one.stop is ArmStop.PROVIDER_FAILED and records[3].refusal is Refusal.PROVIDER_FAILED
    assert records[3].response_body["error"]["type"] == "invalid_request_error"  # type: ignore[index,call-overload]


def test_requests_it_cannot_bound_or_price_are_refused_before_the_provider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex sends no max_output_tokens: without a bound no cap can hold, so the request is refused, not guessed."""
    double = ResponsesDouble()
    with _forwarding(double, tmp_path, monkeypatch) as gateway:
        unbounded = _post(gateway, responses_body(user("hi"), model=MODEL))
        unpriced = _post(gateway, responses_body(user("hi"), model="gpt-unknown", max_output_tokens=10))
        records = _records(gateway, tmp_path)
    assert unbounded.status == 400 and "max_output_tokens" in unbounded.json["error"]["message"]
    assert unpriced.status == 400 and "gpt-unknown" in unpriced.json["error"]["message"]
    assert double.received == [] and [r.refusal for r in records] == [Refusal.BAD_BODY, Refusal.UNPRICED_MODEL]


def test_a_tool_call_is_relayed_whole_and_its_followup_continues(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def model(body: dict[str, Any]) -> list[dict[str, Any]]:
        if body["input"][-1]["type"] == "function_call_output":
            return [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}]
        return [call("call_9", "exec_command", {"cmd": "ls"})]

    double = ResponsesDouble(model=model)
    with _forwarding(double, tmp_path, monkeypatch) as gateway:
        first = SseDecoder().feed(_post(gateway, _bounded(user("list"))).body)
        (item,) = [e.data["item"] for e in first if e.event == "response.output_item.done"]  # type: ignore[index,call-overload]
        result = {"type": "function_call_output", "call_id": item["call_id"], "output": "a.py"}  # type: ignore[index]
        second = _post(gateway, _bounded(user("list"), item, result, stream=False))  # type: ignore[arg-type]
        records = _records(gateway, tmp_path)
    assert second.json["output"][0]["content"][0]["text"] == "done"
    assert [r.charge for r in records] == [ChargeBasis.USAGE, ChargeBasis.USAGE] and records[0].rule is None
    assert sum(r.cost_usd for r in records) == double.billed_usd
    assert Decimal(0) < double.billed_usd
