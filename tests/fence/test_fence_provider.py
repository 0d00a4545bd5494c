"""The quota client's reading of the documented API, and the contracts the fence and the gateway read."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from fence_provider_double import CREDITS_PATH, KEY, KEY_PATH, Account, Failure
from pydantic import ValidationError

from bench.errors import ContractError
from bench.fence import (
    ArmCap,
    FenceConfig,
    KeyRejected,
    PairCaps,
    ProviderClient,
    ProviderResponseInvalid,
    ProviderUnreachable,
    load_config,
)


def _client(base_url: str, key: str = KEY) -> ProviderClient:
    return ProviderClient(base_url, key, timeout_seconds=2.0)


def test_amounts_are_read_exactly_from_numbers_and_numeric_strings(base_url: str, account: Account) -> None:
    account.bodies[CREDITS_PATH] = b'{"data": {"total_credits": 100.000000000001, "total_usage": "0.1"}}'
    credits = _client(base_url).credits()
    assert credits.balance_usd == Decimal("99.900000000001")
    info = _client(base_url).key_info()
    assert (info.limit_usd, info.limit_remaining_usd, info.usage_usd) == (Decimal(10), Decimal(10), Decimal(0))
    assert repr(_client(base_url)).count(KEY) == 0


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"data": {"total_credits": true, "total_usage": 0}}', "finite amount in USD, got True"),
        (b'{"data": {"total_credits": "NaN", "total_usage": 0}}', "finite amount in USD, got 'NaN'"),
        (b'{"data": {"total_credits": NaN, "total_usage": 0}}', "NaN is not a number"),
        (b'{"data": {"total_credits": null, "total_usage": 0}}', "got None"),
        (b'{"data": {"total_usage": 0}}', "no `data.total_credits`"),
        (b'{"credits": 3}', "with a `data` object"),
        (b"<html>Bad gateway</html>", "not JSON"),
    ],
)
def test_an_undocumented_answer_is_refused_by_name(base_url: str, account: Account, body: bytes, message: str) -> None:
    account.bodies[CREDITS_PATH] = body
    with pytest.raises(ProviderResponseInvalid, match=f"GET {base_url}{CREDITS_PATH}: .*{message}"):
        _client(base_url).credits()


def test_status_codes_map_to_what_the_fence_needs(base_url: str, account: Account) -> None:
    with pytest.raises(KeyRejected, match="401: User not found") as caught:
        _client(base_url, key="sk-or-v1-wrong").key_info()
    assert caught.value.status == 401
    with pytest.raises(ProviderResponseInvalid, match="unexpected status 404"):
        _client(base_url + "/elsewhere").credits()
    with pytest.raises(ProviderUnreachable, match="transport failed"):
        _client("http://127.0.0.1:9").credits()  # discard port: nothing listens
    assert account.requests == [KEY_PATH, "/elsewhere" + CREDITS_PATH]


def test_a_redirect_is_not_followed_with_the_key(base_url: str, account: Account) -> None:
    account.failures[CREDITS_PATH] = Failure.REDIRECT
    with pytest.raises(ProviderResponseInvalid, match="unexpected status 302"):
        _client(base_url).credits()
    assert account.requests == [CREDITS_PATH]


def test_fence_config_is_strict_and_loads_amounts_exactly(tmp_path: Path) -> None:
    data = {
        "base_url": "https://openrouter.ai/",
        "key_env": "EVAL_KEY",
        "key_sha256": "a" * 64,
        "production_reserve_usd": 25.10,
    }
    path = tmp_path / "fence.json"
    path.write_text(json.dumps(data))
    config = load_config(path)
    assert config.base_url == "https://openrouter.ai" and config.production_reserve_usd == Decimal("25.10")
    path.write_text(json.dumps({**data, "key": "sk-or-v1-never-in-a-config"}))
    with pytest.raises(ContractError, match="key: Extra inputs are not permitted"):
        load_config(path)
    with pytest.raises(ValidationError, match="http\\(s\\) base URL"):
        FenceConfig.model_validate_json(json.dumps({**data, "base_url": "file:///etc"}))
    with pytest.raises(ContractError, match="cannot read the fence config"):
        load_config(tmp_path / "absent.json")


def test_pair_caps_sum_exactly_and_name_their_arms() -> None:
    caps = PairCaps(arms=(ArmCap(arm="a", cap_usd=Decimal("0.1")), ArmCap(arm="b", cap_usd=Decimal("0.2"))))
    assert caps.pair_cap_usd == Decimal("0.3") and caps.cap_of("b") == Decimal("0.2")
    with pytest.raises(ContractError, match="no cap for arm 'c'"):
        caps.cap_of("c")
    with pytest.raises(ValidationError, match="unique"):
        PairCaps(arms=(ArmCap(arm="a", cap_usd=Decimal(1)), ArmCap(arm="a", cap_usd=Decimal(1))))
    with pytest.raises(ValidationError):
        ArmCap(arm="a", cap_usd=0.5)  # a float has already lost the exact amount
