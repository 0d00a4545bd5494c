from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from decimal import Decimal

import pytest
from fence_provider_double import KEY, KEY_ENV, Account, serve

from bench.contracts import Sha256
from bench.fence import Fence, FenceConfig
from bench.store import Store


@pytest.fixture
def account() -> Account:
    return Account(key=KEY)


@pytest.fixture
def base_url(account: Account) -> Iterator[str]:
    with serve(account) as url:
        yield url


@pytest.fixture
def config(base_url: str) -> FenceConfig:
    return FenceConfig(
        base_url=base_url,
        key_env=KEY_ENV,
        key_sha256=Sha256(hashlib.sha256(KEY.encode()).hexdigest()),
        production_reserve_usd=Decimal("50"),
        timeout_seconds=2.0,  # generous: the machine is shared, and only the HANG case waits it out
    )


@pytest.fixture
def make_fence(store: Store, config: FenceConfig) -> Callable[..., Fence]:
    """A fence for pair ``p1`` whose environment exports ``key`` (the eval key unless told otherwise)."""

    def make(key: str | None = KEY, pair: str = "p1") -> Fence:
        environ = {} if key is None else {KEY_ENV: key}
        return Fence(store, pair, config, environ=environ)

    return make
