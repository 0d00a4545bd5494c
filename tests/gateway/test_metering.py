"""Usage as reported, read strictly; exact prices; the upper bound; the meter's per-arm account."""

from __future__ import annotations

import threading
import time
from decimal import Decimal

import pytest
from loopback import PRICE, caps

from bench.errors import ContractError
from bench.gateway import ArmSpend, ArmStop, ChargeBasis, TokenUsage
from bench.gateway.metering import Meter, metered_usage, stream_usage, within_bounds


def test_usage_is_read_strictly_and_nulls_are_counts_not_taken() -> None:
    assert metered_usage({"input_tokens": 5, "output_tokens": 2, "cache_read_input_tokens": None}) == TokenUsage(
        input_tokens=5, output_tokens=2
    )
    assert metered_usage({"input_tokens": 5, "output_tokens": 2, "service_tier": "standard"}) is not None
    for broken in (
        None,
        [],
        {"output_tokens": 2},  # no input count
        {"input_tokens": 5},  # no output count
        {"input_tokens": "5", "output_tokens": 2},
        {"input_tokens": 5.0, "output_tokens": 2},
        {"input_tokens": True, "output_tokens": 2},
        {"input_tokens": -1, "output_tokens": 2},
        {"input_tokens": 5, "output_tokens": 2, "cache_creation_input_tokens": "7"},
    ):
        assert metered_usage(broken) is None, broken


def test_stream_usage_takes_each_count_at_its_largest_report() -> None:
    start = {"input_tokens": 778, "cache_read_input_tokens": 40, "output_tokens": 5}
    assert stream_usage(start, [{"input_tokens": 0, "output_tokens": 104}]) == TokenUsage(
        input_tokens=778, output_tokens=104, cache_read_input_tokens=40
    )
    assert stream_usage(start, []) is None  # no final report
    assert stream_usage(None, [{"output_tokens": 104}]) is None
    assert stream_usage(start, [{"output_tokens": "104"}]) is None


def test_prices_are_exact_and_the_upper_bound_covers_the_answer() -> None:
    usage = TokenUsage(input_tokens=1, output_tokens=1, cache_creation_input_tokens=1, cache_read_input_tokens=1)
    assert PRICE.cost(usage) == Decimal("0.00002205")  # 3 + 15 + 3.75 + 0.3 per million, no float on the way
    assert PRICE.cost(TokenUsage(input_tokens=10**9)) == Decimal(3000)
    request_bytes, max_tokens = 40_000, 1024
    largest = TokenUsage(input_tokens=0, cache_creation_input_tokens=request_bytes, output_tokens=max_tokens)
    assert PRICE.upper_bound(request_bytes, max_tokens) > PRICE.cost(largest)


def test_the_meter_holds_each_request_at_its_worst_case_so_spending_never_passes_the_cap() -> None:
    meter = Meter(["one", "two"], caps(one="0.10", two="0.50"))
    assert meter.admit("one", Decimal("0.06")) is None  # held: 0.06 of 0.10
    waiting: list[ArmSpend | None] = []
    second = threading.Thread(target=lambda: waiting.append(meter.admit("one", Decimal("0.05"))))
    second.start()  # 0.06 held + 0.05 > 0.10: it waits for the request in flight instead of being refused
    while not meter._settled._waiters:  # type: ignore[attr-defined]  # CPython's Condition: the waiter is parked
        time.sleep(0.001)
    meter.settle("one", Decimal("0.06"), Decimal("0.01"), ChargeBasis.USAGE)  # the hold becomes what it cost
    second.join()
    assert waiting == [None]  # 0.01 spent + 0.05 fits: admitted once the first settled
    meter.settle("one", Decimal("0.05"), Decimal("0.05"), ChargeBasis.UPPER_BOUND)
    assert meter.admit("one", Decimal("0.04")) is None and meter.spent("one") == Decimal("0.06")
    meter.settle("one", Decimal("0.04"), Decimal(0), ChargeBasis.NOT_BILLED)
    refused = meter.admit("one", Decimal("0.0400000001"))  # 0.06 + that > 0.10, and nothing in flight: refused
    assert refused is not None and refused.spent_usd == Decimal("0.06") and refused.cap_reached
    assert meter.admit("one", Decimal("0.04")) is None  # exactly the cap fits
    meter.settle("one", Decimal("0.04"), Decimal("0.04"), ChargeBasis.USAGE)
    with pytest.raises(ContractError, match="more than its hold"):
        meter.settle("two", Decimal("0.01"), Decimal("0.02"), ChargeBasis.USAGE)
    one, two = meter.report()
    assert one.spent_usd == one.cap_usd == Decimal("0.10")  # spent <= cap, reached exactly
    assert (one.charged_answers, one.upper_bound_answers, one.bounded_usd, one.cap_refusals) == (
        3,
        1,
        Decimal("0.05"),
        1,
    )
    assert two.spent_usd == 0 and not two.cap_reached
    with pytest.raises(ContractError, match="no cap for arm 'three'"):
        Meter(["three"], caps(one="1"))


def test_the_meter_stops_an_arm_for_its_providers_faults() -> None:
    meter = Meter(["one", "two"], caps(one="1", two="1"), provider_error_limit=3)
    for failed in (True, True, False, True, True):  # a good answer in between starts the count again
        assert meter.admit("one", Decimal("0.1")) is None
        meter.settle("one", Decimal("0.1"), Decimal(0), ChargeBasis.NOT_BILLED, provider_error=failed)
    assert meter.report()[0].stop is None and meter.report()[0].provider_errors == 2
    assert meter.admit("one", Decimal("0.1")) is None
    meter.settle("one", Decimal("0.1"), Decimal(0), ChargeBasis.NOT_BILLED, provider_error=True)
    stopped = meter.admit("one", Decimal(0))  # the third in a row stopped it: nothing more is admitted
    assert stopped is not None and stopped.stop is ArmStop.PROVIDER_FAILED
    assert meter.admit("two", Decimal("0.2")) is None  # another arm's provider errors are its own
    meter.settle("two", Decimal("0.2"), Decimal("0.2"), ChargeBasis.OUT_OF_BOUNDS)
    two = meter.report()[1]
    assert two.stop is ArmStop.PROVIDER_MALFORMED and two.upper_bound_answers == 1 and two.spent_usd == Decimal("0.2")
    assert meter.admit("two", Decimal(0)) is not None and meter.report()[1].stop_refusals == 1


def test_a_usage_beyond_the_requests_bounds_is_out_of_them() -> None:
    assert within_bounds(TokenUsage(input_tokens=100, output_tokens=1024), 100, 1024)
    assert not within_bounds(TokenUsage(input_tokens=100, output_tokens=1025), 100, 1024)  # past max_tokens
    assert within_bounds(TokenUsage(input_tokens=4196), 100, 1)  # the request's bytes and the prompt overhead
    assert not within_bounds(TokenUsage(input_tokens=4000, cache_read_input_tokens=197), 100, 1)
    largest = TokenUsage(cache_creation_input_tokens=4196, output_tokens=1024)
    assert PRICE.cost(largest) == PRICE.upper_bound(100, 1024)  # the bound is the dearest usage the request allows
