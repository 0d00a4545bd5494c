"""Usage as reported, read strictly; exact prices; the upper bound; the meter's per-arm account."""

from __future__ import annotations

from decimal import Decimal

import pytest
from loopback import PRICE, caps

from bench.errors import ContractError
from bench.gateway import ChargeBasis, TokenUsage
from bench.gateway.metering import Meter, metered_usage, stream_usage


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


def test_the_meter_keeps_each_arm_against_its_pair_cap() -> None:
    meter = Meter(["one", "two"], caps(one="0.10", two="0.50"))
    assert meter.admit("one") is None
    meter.charge("one", Decimal("0.06"), ChargeBasis.USAGE)
    meter.charge("one", Decimal("0.05"), ChargeBasis.UPPER_BOUND)
    meter.charge("one", Decimal("9"), ChargeBasis.NOT_BILLED)
    refused = meter.admit("one")
    assert refused is not None and refused.spent_usd == Decimal("0.11") and refused.cap_reached
    assert meter.admit("two") is None
    one, two = meter.report()
    assert (one.charged_answers, one.upper_bound_answers, one.cap_refusals) == (2, 1, 1)
    assert two.spent_usd == 0 and not two.cap_reached
    with pytest.raises(ContractError, match="no cap for arm 'three'"):
        Meter(["three"], caps(one="1"))
