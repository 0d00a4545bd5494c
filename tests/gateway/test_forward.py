"""Forward mode against a local stand-in for the provider: a policy-mode gateway, which speaks the documented API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from loopback import KEY, OTHER_KEY, arm, post, request_body, write_policy

from bench.gateway import (
    DirectoryRecorder,
    Gateway,
    GatewayConfig,
    GatewayError,
    Mode,
    Price,
    read_exchanges,
)
from bench.gateway.wire import SseDecoder, assemble_message

PROVIDER_KEY = "sk-provider-secret"
PRICE = Price(input=Decimal("3"), output=Decimal("15"), cache_write=Decimal("3.75"), cache_read=Decimal("0.3"))


@pytest.fixture
def provider(tmp_path: Path) -> Iterator[Gateway]:
    root = tmp_path / "provider"
    root.mkdir()
    config = GatewayConfig(mode=Mode.POLICY, arms=(arm("provider", PROVIDER_KEY),), policy=write_policy(root))
    with Gateway(config, DirectoryRecorder(root / "log"), policy_root=root) as gateway:
        yield gateway


@pytest.fixture
def forward(provider: Gateway, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Gateway]:
    monkeypatch.setenv("PROVIDER_KEY", PROVIDER_KEY)
    config = GatewayConfig(
        mode=Mode.FORWARD,
        arms=(arm("one", KEY, cap=Decimal("0.05")), arm("two", OTHER_KEY, cap=Decimal(1))),
        upstream=provider.url,
        upstream_key_env="PROVIDER_KEY",
        prices={"claude-sonnet-4-5": PRICE},
    )
    with Gateway(config, DirectoryRecorder(tmp_path / "log")) as gateway:
        yield gateway


def test_relays_streams_and_meters_each_arm(forward: Gateway, provider: Gateway, tmp_path: Path) -> None:
    status, content_type, data = post(forward.url, "/v1/messages?beta=true", request_body("remember the ledger"))
    assert status == 200 and content_type == "text/event-stream"
    message = assemble_message(SseDecoder().feed(data))
    assert message["content"][0]["name"] == "Read"
    status, _, data = post(forward.url, "/v1/messages", request_body("hi", stream=False), key=OTHER_KEY)
    assert status == 200 and json.loads(data)["stop_reason"] == "end_turn"
    forward.stop()
    provider.stop()
    records = read_exchanges(tmp_path / "log")
    assert [r.arm for r in records] == ["one", "two"]
    for record in records:
        assert record.usage is not None and record.cost_usd == PRICE.cost(record.usage)
    assert forward.spent("one") == records[0].cost_usd and forward.spent("one") > 0
    upstream = read_exchanges(tmp_path / "provider" / "log")
    assert [r.arm for r in upstream] == ["provider", "provider"]  # the provider saw its key, never an arm's
    assert upstream[0].request_body == request_body("remember the ledger")


def test_refuses_past_the_cap_with_an_api_error(forward: Gateway, tmp_path: Path) -> None:
    body = request_body("x" * 60_000)  # ~15k input tokens at $3/M: about $0.045 a request
    assert post(forward.url, "/v1/messages", body)[0] == 200
    assert post(forward.url, "/v1/messages", body)[0] == 200  # started under the cap: completes
    status, _, data = post(forward.url, "/v1/messages", body)
    error = json.loads(data)
    assert status == 400 and error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    assert "spending cap" in error["error"]["message"]
    assert post(forward.url, "/v1/messages", body, key=OTHER_KEY)[0] == 200  # the other arm's cap is its own
    spent = forward.spent("one")
    forward.stop()
    records = read_exchanges(tmp_path / "log")
    assert [r.status for r in records] == [200, 200, 400, 200] and records[2].cost_usd == 0
    assert spent == records[0].cost_usd + records[1].cost_usd


def test_unpriced_model_and_non_object_body_are_refused(forward: Gateway) -> None:
    status, _, data = post(forward.url, "/v1/messages", {**request_body("hi"), "model": "unknown-model"})
    assert status == 400 and "not available" in json.loads(data)["error"]["message"]
    status, _, data = post(forward.url, "/v1/messages", [1, 2])
    assert status == 400 and json.loads(data)["error"]["type"] == "invalid_request_error"


def test_forward_mode_needs_the_provider_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ABSENT_KEY", raising=False)
    config = GatewayConfig(
        mode=Mode.FORWARD, arms=(arm("one", KEY),), upstream="http://127.0.0.1:9", upstream_key_env="ABSENT_KEY",
        prices={"m": PRICE},
    )  # fmt: skip
    with pytest.raises(GatewayError, match=r"\$ABSENT_KEY"):
        Gateway(config, DirectoryRecorder(tmp_path))


def test_unreachable_upstream_is_a_502_api_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PROVIDER_KEY", PROVIDER_KEY)
    config = GatewayConfig(
        mode=Mode.FORWARD, arms=(arm("one", KEY),), upstream="http://127.0.0.1:9", upstream_key_env="PROVIDER_KEY",
        prices={"claude-sonnet-4-5": PRICE},
    )  # fmt: skip
    with Gateway(config, DirectoryRecorder(tmp_path)) as gateway:
        status, _, data = post(gateway.url, "/v1/messages", request_body("hi"))
    assert status == 502 and json.loads(data)["error"]["type"] == "api_error"


def test_provider_errors_are_relayed_and_not_charged(
    provider: Gateway, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PROVIDER_KEY", "sk-revoked")
    config = GatewayConfig(
        mode=Mode.FORWARD, arms=(arm("one", KEY),), upstream=provider.url, upstream_key_env="PROVIDER_KEY",
        prices={"claude-sonnet-4-5": PRICE},
    )  # fmt: skip
    with Gateway(config, DirectoryRecorder(tmp_path / "log")) as gateway:
        status, _, data = post(gateway.url, "/v1/messages", request_body("hi"))
        assert gateway.spent("one") == 0
    assert status == 401 and json.loads(data)["error"]["type"] == "authentication_error"
    assert read_exchanges(tmp_path / "log")[0].status == 401
