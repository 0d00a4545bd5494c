"""Gateway fixtures: a policy-mode gateway, and a forward-mode gateway in front of the provider double."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from loopback import (
    KEY,
    KEY_ENV,
    MODEL,
    OTHER_KEY,
    PRICE,
    PROVIDER_KEY,
    AnthropicDouble,
    ForwardFactory,
    arm,
    caps,
    serve_double,
    write_policy,
)

from bench.gateway import DirectoryRecorder, ForwardTerms, Gateway, GatewayConfig, Mode, Recorder, UpstreamAuth


@pytest.fixture
def policy_gateway(tmp_path: Path) -> Iterator[Gateway]:
    config = GatewayConfig(
        mode=Mode.POLICY, arms=(arm("one", KEY), arm("two", OTHER_KEY)), policy=write_policy(tmp_path)
    )
    with Gateway(config, DirectoryRecorder(tmp_path / "log"), policy_root=tmp_path) as gateway:
        yield gateway


@pytest.fixture
def double() -> AnthropicDouble:
    return AnthropicDouble()


@pytest.fixture
def forward_gateway(double: AnthropicDouble, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ForwardFactory:
    """``make(cap_one=..., recorder=...)``: a forward gateway for arms one and two in front of ``double``."""
    monkeypatch.setenv(KEY_ENV, PROVIDER_KEY)

    @contextmanager
    def make(
        cap_one: str = "1", cap_two: str = "1", recorder: Recorder | None = None, bearer: bool = False
    ) -> Iterator[Gateway]:
        with serve_double(double) as url:
            config = GatewayConfig(
                mode=Mode.FORWARD,
                arms=(arm("one", KEY), arm("two", OTHER_KEY)),
                upstream=url + double.prefix,
                forward=ForwardTerms(
                    key_env=KEY_ENV,
                    upstream_auth=UpstreamAuth.BEARER if bearer else UpstreamAuth.X_API_KEY,
                    prices={MODEL: PRICE},
                ),
                caps=caps(one=cap_one, two=cap_two),
            )
            with Gateway(config, recorder or DirectoryRecorder(tmp_path / "log")) as gateway:
                yield gateway

    return make
