"""Forward mode end to end, with the real CLI in real containers: the gateway relays each arm to a provider on a
loopback socket, meters it per arm in exact decimals and caps it; the money fence reads an OpenRouter-shaped quota
API on another loopback socket.

The provider stand-in is a policy-mode gateway: it speaks the Messages API as documented (streamed events, usage)
and accepts only its own key. The quota API is ``tests/fence/fence_provider_double.py``. Neither URL nor key is in
the settings: they name the environment variables that hold them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path, PurePosixPath

import pytest
from agent_scenario import MODEL, Inputs, challenge, neutral_dir, policy_bytes, reference_system, workspace_tree

from bench.agent import ArmRecord, ArmRun, AttemptSetup, PairRecord, read_exchange_log, run_attempt
from bench.contracts import Digest, Sha256
from bench.fence import FenceStopped
from bench.fence.fence import read_record
from bench.fence.fence_record import CheckName, CheckVerdict, FenceOutcome
from bench.gateway import ArmKey, DirectoryRecorder, Gateway, GatewayConfig, Mode, PolicyPin, Price
from bench.provision import load_fixture
from bench.sandbox.backends import ModelNetwork, Session
from bench.sandbox.backends.docker import DockerBackend
from bench.sandbox.layout import WORKSPACE
from bench.sandbox.spec import ContainerSpec
from bench.store import Store
from bench.suite.forward import FenceDeclaration, ForwardSettings
from bench.suite.memory_system import CONTROL
from tests.fence.fence_provider_double import CREDITS_PATH, Account, Failure, serve

PROVIDER_KEY = "sk-ant-api03-planted-provider-key-0123456789abcdef"
PRICE = Price(input=Decimal("3"), output=Decimal("15"), cache_write=Decimal("3.75"), cache_read=Decimal("0.30"))
UPSTREAM_ENV, KEY_ENV, QUOTA_ENV = "TEST_PROVIDER_URL", "TEST_PROVIDER_KEY", "TEST_QUOTA_URL"
ENDLESS = json.dumps(  # a model that keeps asking for more turns: every answer is another tool call
    {"rules": [], "default": [{"type": "tool_use", "name": "Bash", "input": {"command": f"ls {WORKSPACE}"}}]}
).encode()


class CountingBackend(DockerBackend):
    """The real Docker backend, counting the containers it is asked to start."""

    sessions = 0

    def session(
        self,
        spec: ContainerSpec,
        workspace: Digest,
        home_dirs: tuple[PurePosixPath, ...] = (),
        network: ModelNetwork | None = None,
    ) -> AbstractContextManager[Session]:
        type(self).sessions += 1
        return super().session(spec, workspace, home_dirs, network)


@dataclass
class Provider:
    gateway: Gateway
    log: Path
    account: Account

    def requests(self) -> int:
        return len(list(self.log.glob("*.json"))) if self.log.is_dir() else 0


@pytest.fixture
def provider(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Provider]:
    """The provider's Messages API (answering from ``request.param``'s policy) and its quota API, both on loopback."""
    policy: bytes = getattr(request, "param", policy_bytes())
    (tmp_path / "policy.json").write_bytes(policy)
    key = ArmKey(label="provider", key_sha256=hashlib.sha256(PROVIDER_KEY.encode()).hexdigest(), cap_usd=Decimal(0))
    config = GatewayConfig(
        mode=Mode.POLICY, arms=(key,), policy=PolicyPin(path="policy.json", sha256=Sha256.of(policy))
    )
    account = Account(key=PROVIDER_KEY)
    with Gateway(config, DirectoryRecorder(tmp_path / "log"), policy_root=tmp_path) as gateway, serve(account) as quota:
        monkeypatch.setenv(UPSTREAM_ENV, gateway.url)
        monkeypatch.setenv(QUOTA_ENV, quota)
        monkeypatch.setenv(KEY_ENV, PROVIDER_KEY)
        yield Provider(gateway, tmp_path / "log", account)


def settings(arm_cap: str = "1", pair_cap: str = "2") -> ForwardSettings:
    return ForwardSettings(
        upstream_env=UPSTREAM_ENV,
        key_env=KEY_ENV,
        prices={MODEL: PRICE},
        arm_cap_usd=Decimal(arm_cap),
        pair_cap_usd=Decimal(pair_cap),
        fence=FenceDeclaration(
            quota_url_env=QUOTA_ENV,
            key_sha256=Sha256(hashlib.sha256(PROVIDER_KEY.encode()).hexdigest()),
            production_reserve_usd=Decimal("5"),
            timeout_seconds=5,
        ),
    )


def attempt(inputs: Inputs, agent_image: str, forward: ForwardSettings, home: Path, timeout: int = 120) -> dict:
    backend = CountingBackend(inputs.store)
    run = ArmRun(
        backend, workspace_tree(inputs.store), challenge(timeout=timeout), MODEL, Mode.FORWARD, forward=forward
    )
    setup = AttemptSetup(
        suite_root=Path("."),
        fixture_root=inputs.fixture_root,
        fixture=load_fixture(inputs.fixture_root),
        graph_arm="plain",
        image_id=agent_image,
        systems=(reference_system(home),),
    )
    done = run_attempt(run, setup, attempt=1)
    store = inputs.store
    arms = {CONTROL: store.get_document(done.control, ArmRecord)}
    arms["reference"] = store.get_document(done.treatments["reference"], ArmRecord)
    return {"done": done, "arms": arms, "pair": store.get_document(done.pairs["reference"], PairRecord)}


def _stored_bytes(store: Store) -> Iterator[bytes]:
    for digest in store.digests():
        yield store.get_bytes(digest)


@pytest.mark.parametrize("provider", [ENDLESS], indirect=True)
def test_spending_is_metered_per_arm_and_the_caps_stop_an_endless_model(
    provider: Provider, inputs: Inputs, agent_image: str
) -> None:
    forward = settings(arm_cap="0.25", pair_cap="0.40")
    ran = attempt(inputs, agent_image, forward, neutral_dir())
    control, treatment = ran["arms"][CONTROL], ran["arms"]["reference"]
    for record in (control, treatment):
        exchanges = read_exchange_log(inputs.store, record.exchanges)
        assert record.spent_usd == sum((e.cost_usd for e in exchanges), Decimal(0)) > 0  # exact, per arm
        assert record.cap_usd is not None and record.spent_usd >= record.cap_usd  # it ran into its cap...
        assert exchanges[-1].status == 400 and "spending cap" in json.dumps(exchanges[-1].response_body)
        assert max(e.cost_usd for e in exchanges) + record.cap_usd >= record.spent_usd  # ...overshooting by < 1 answer
    assert control.cap_usd == Decimal("0.25")  # the control ran first (attempt 1): the per-arm cap
    assert treatment.cap_usd == Decimal("0.40") - control.spent_usd  # the pair cap lowered the second arm's cap
    assert ran["pair"].order == (CONTROL, "reference")
    planted = PROVIDER_KEY.encode()
    assert not any(planted in data for data in _stored_bytes(inputs.store)), "the provider key reached the store"


def test_a_401_at_preflight_stops_the_attempt_before_any_container_or_restore(
    provider: Provider, inputs: Inputs, agent_image: str
) -> None:
    provider.account.reject_key = True
    home = neutral_dir()
    CountingBackend.sessions = 0
    with pytest.raises(FenceStopped) as stopped:
        attempt(inputs, agent_image, settings(), home)
    assert CountingBackend.sessions == 0 and provider.requests() == 0 and not any(home.iterdir())
    record, checks = read_record(inputs.store, stopped.value.record)
    assert record.outcome is FenceOutcome.STOPPED
    assert [(c.check, c.verdict) for c in checks] == [
        (CheckName.KEY_IDENTITY, CheckVerdict.PASSED),
        (CheckName.KEY_BUDGET, CheckVerdict.FAILED),
    ]
    assert "401" in checks[-1].reason


def test_a_429_between_the_arms_is_recorded_unobserved_and_the_pair_goes_on(
    provider: Provider, inputs: Inputs, agent_image: str
) -> None:
    provider.account.failures[CREDITS_PATH] = Failure.RATE_LIMITED
    provider.account.healthy[CREDITS_PATH] = 1  # preflight reads the balance; the drain check gets 429
    ran = attempt(inputs, agent_image, settings(), neutral_dir())
    assert set(ran["arms"]) == {CONTROL, "reference"} and all(arm.steps for arm in ran["arms"].values())
    record, checks = read_record(inputs.store, ran["pair"].fence)
    assert record.outcome is FenceOutcome.CLEARED
    assert [(c.check, c.verdict) for c in checks] == [
        (CheckName.KEY_IDENTITY, CheckVerdict.PASSED),
        (CheckName.KEY_BUDGET, CheckVerdict.PASSED),
        (CheckName.SHARED_HEADROOM, CheckVerdict.PASSED),
        (CheckName.OBSERVED_DRAIN, CheckVerdict.UNOBSERVED),
    ]
    assert "429" in checks[-1].reason
    assert all(arm.spent_usd > 0 for arm in ran["arms"].values())
