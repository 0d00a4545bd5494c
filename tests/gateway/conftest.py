"""The policy-mode gateway fixture; helpers live in loopback.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from loopback import KEY, OTHER_KEY, arm, write_policy

from bench.gateway import DirectoryRecorder, Gateway, GatewayConfig, Mode


@pytest.fixture
def policy_gateway(tmp_path: Path) -> Iterator[Gateway]:
    config = GatewayConfig(
        mode=Mode.POLICY, arms=(arm("one", KEY), arm("two", OTHER_KEY)), policy=write_policy(tmp_path)
    )
    with Gateway(config, DirectoryRecorder(tmp_path / "log"), policy_root=tmp_path) as gateway:
        yield gateway
