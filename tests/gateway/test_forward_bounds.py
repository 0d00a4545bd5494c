"""Forward mode against the provider double, issue 32: a cap is a hard bound, and a provider's faults stop an arm.

Every test ends by checking the invariant: what the gateway metered for an arm never passes its cap, and no answer
costs more than the worst case its request was admitted with.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from loopback import (
    MODEL,
    OTHER_KEY,
    PRICE,
    AnthropicDouble,
    Fault,
    ForwardFactory,
    Usage,
    post,
    request_body,
    tool_loop,
)

from bench.gateway import ArmStop, ChargeBasis, ExchangeRecord, Gateway, Refusal, read_exchanges


def assert_bounded(gateway: Gateway, records: tuple[ExchangeRecord, ...]) -> None:
    """spent <= cap for every arm, the spending is the records' sum, and each answer costs at most its hold."""
    for spend in gateway.spending():
        assert spend.cap_usd is not None and spend.spent_usd <= spend.cap_usd, spend
        assert spend.spent_usd == sum((r.cost_usd for r in records if r.arm == spend.arm), Decimal(0))
    for record in records:
        assert record.worst_case_usd is None or record.cost_usd <= record.worst_case_usd, record.sequence


def test_an_answer_with_absurd_usage_is_charged_its_bound_and_stops_the_arm(
    double: AnthropicDouble, forward_gateway: ForwardFactory, tmp_path: Path
) -> None:
    """The issue's finding: 10,000,000 output tokens reported against max_tokens 1,024 were metered at face value,
    150 USD against a 2 USD cap. Now the answer is charged what its request allows, and the arm stops."""
    double.usage = Usage.ABSURD
    with forward_gateway(cap_one="2", cap_two="2") as gateway:
        first = post(gateway.url, "/v1/messages?beta=true", request_body("hi"))
        second = post(gateway.url, "/v1/messages?beta=true", request_body("again"))
        other = post(gateway.url, "/v1/messages", request_body("the other arm", stream=False), key=OTHER_KEY)
    records = read_exchanges(tmp_path / "log")
    assert first.status == 200 and records[0].charge is ChargeBasis.OUT_OF_BOUNDS
    assert records[0].usage is not None and records[0].usage.output_tokens == 10_000_000  # the report, kept
    bound = PRICE.upper_bound(len(double.received[0].body), 1024)
    assert records[0].cost_usd == records[0].worst_case_usd == bound < Decimal("0.05")  # not 150 USD
    assert second.status == 400 and records[1].refusal is Refusal.PROVIDER_MALFORMED and records[1].cost_usd == 0
    assert "impossible usage" in second.json["error"]["message"]
    assert len(double.received) == 2  # the stopped arm's next request never reached the provider...
    assert other.status == 200 and records[2].charge is ChargeBasis.OUT_OF_BOUNDS  # ...the other arm's own did
    spending = {spend.arm: spend for spend in gateway.spending()}
    assert spending["one"].stop is ArmStop.PROVIDER_MALFORMED and spending["one"].stop_refusals == 1
    assert spending["one"].upper_bound_answers == 1 and spending["one"].bounded_usd == bound
    assert_bounded(gateway, records)


@pytest.mark.parametrize("cap", ["0.05", "0.2", "0.5"])
def test_an_endless_model_whose_answers_report_no_usage_never_passes_the_cap(
    cap: str, double: AnthropicDouble, forward_gateway: ForwardFactory, tmp_path: Path
) -> None:
    double.model, double.usage = tool_loop, Usage.OMITTED
    body = request_body("start " + "z" * 10_000, stream=False)
    with forward_gateway(cap_one=cap) as gateway:
        for _ in range(50):
            answer = post(gateway.url, "/v1/messages", body)
            if answer.status != 200:
                break
            result = {"type": "tool_result", "tool_use_id": answer.json["content"][0]["id"], "content": "ok"}
            body["messages"] += [
                {"role": "assistant", "content": answer.json["content"]},
                {"role": "user", "content": [result]},
            ]
    records = read_exchanges(tmp_path / "log")
    assert records[-1].refusal is Refusal.CAP_REACHED and records[-1].worst_case_usd is not None
    spent = gateway.spent("one")
    assert spent <= Decimal(cap) < spent + records[-1].worst_case_usd  # refused only when the worst case did not fit
    assert all(r.charge is ChargeBasis.UPPER_BOUND for r in records[:-1])  # each charged its bound, none zero
    assert_bounded(gateway, records)


@pytest.mark.parametrize("fault", [401, Fault.RATE_LIMITED, Fault.OVERLOADED, Fault.SERVER_ERROR, Fault.CUT])
def test_three_consecutive_provider_errors_stop_the_arm_before_a_fourth_reaches_the_provider(
    fault: int | Fault, double: AnthropicDouble, forward_gateway: ForwardFactory, tmp_path: Path
) -> None:
    if fault == 401:
        double.keys = frozenset({"sk-a-key-the-provider-knows-not-ours"})
    else:
        assert isinstance(fault, Fault)
        double.faults = [fault] * 10
    with forward_gateway() as gateway:
        answers = [post(gateway.url, "/v1/messages?beta=true", request_body(f"try {n}")) for n in range(5)]
        counted = post(gateway.url, "/v1/messages/count_tokens", {"model": MODEL, "messages": []})
    assert len(double.received) == 3  # the fourth and later requests were refused by the gateway
    records = read_exchanges(tmp_path / "log")
    assert [r.refusal for r in records[3:]] == [Refusal.PROVIDER_FAILED] * 3  # count_tokens included
    assert all(a.status == 400 and "failed repeatedly" in a.json["error"]["message"] for a in answers[3:])
    assert counted.status == 400
    (one, _) = gateway.spending()
    assert one.stop is ArmStop.PROVIDER_FAILED and one.provider_errors == 3 and one.stop_refusals == 3
    assert_bounded(gateway, records)


def test_a_good_answer_between_provider_errors_starts_the_count_again(
    double: AnthropicDouble, forward_gateway: ForwardFactory, tmp_path: Path
) -> None:
    double.faults = [Fault.OVERLOADED, Fault.OVERLOADED, None, Fault.OVERLOADED, Fault.OVERLOADED]  # type: ignore[list-item]
    with forward_gateway() as gateway:
        statuses = [post(gateway.url, "/v1/messages", request_body("hi")).status for _ in range(6)]
    assert statuses == [529, 529, 200, 529, 529, 200]  # never three in a row: the arm goes on
    assert gateway.spending()[0].stop is None
    assert_bounded(gateway, read_exchanges(tmp_path / "log"))


def test_a_client_error_is_not_the_providers_failure(
    double: AnthropicDouble, forward_gateway: ForwardFactory, tmp_path: Path
) -> None:
    """A 400 the provider gives the request itself (here: no messages) is the client's: it does not stop the arm."""
    with forward_gateway() as gateway:
        broken = {key: value for key, value in request_body("hi").items() if key != "messages"}
        statuses = [post(gateway.url, "/v1/messages", broken).status for _ in range(4)]
        good = post(gateway.url, "/v1/messages", request_body("hi"))
    assert statuses == [400] * 4 and good.status == 200 and gateway.spending()[0].stop is None
    assert [json.loads(r.body).get("messages") for r in double.received][:1] == [None]
