"""Forward mode end to end, with the real CLI in real containers: the gateway relays each arm to a provider on a
loopback socket, meters it per arm in exact decimals and caps it; the money fence reads an OpenRouter-shaped quota
API on another loopback socket.

The provider is ``tests/gateway/loopback.py``'s AnthropicDouble (the Messages API as documented, its own key only),
its model scripted by a policy or by a tool loop; each amount it bills moves the balance of the OpenRouter-shaped
quota API (``tests/fence/fence_provider_double.py``) the fence reads. Neither URL nor key is in the settings: they
name the environment variables that hold them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from agent_scenario import MODEL, Inputs, challenge, neutral_dir, policy_bytes, reference_system, workspace_tree

from bench.agent import ArmRecord, ArmRun, AttemptSetup, PairRecord, read_exchange_log, run_attempt
from bench.analysis.attempt_record import ArmEnding
from bench.analysis.prereg import Budget
from bench.contracts import Digest, Sha256
from bench.fence import FenceStopped
from bench.fence.fence import read_record
from bench.fence.fence_record import CheckName, CheckVerdict, FenceOutcome
from bench.gateway import Mode, Policy, Price
from bench.provision import load_fixture
from bench.run.ending import arm_ending
from bench.sandbox.backends import ModelNetwork, Session
from bench.sandbox.backends.docker import DockerBackend
from bench.sandbox.spec import ContainerSpec
from bench.store import Store
from bench.suite.forward import FenceDeclaration, ForwardSettings
from bench.suite.memory_system import CONTROL
from tests.fence.fence_provider_double import CREDITS_PATH, Account, Failure, serve
from tests.gateway.loopback import AnthropicDouble, Reply, serve_double, tool_loop

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

PROVIDER_KEY = "sk-ant-api03-planted-provider-key-0123456789abcdef"
PRICE = Price(
    input=Decimal("3"), output=Decimal("15"), cache_write=Decimal("3.75"), cache_read=Decimal("0.30")
)  # its RATES
UPSTREAM_ENV, KEY_ENV, QUOTA_ENV = "TEST_PROVIDER_URL", "TEST_PROVIDER_KEY", "TEST_QUOTA_URL"
ENDLESS = "endless"  # a model that keeps asking for more turns: every answer is another tool call


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
    double: AnthropicDouble
    account: Account

    def requests(self) -> int:
        return len(self.double.received)


def scripted(policy: bytes) -> Callable[[dict[str, Any]], Reply]:
    """A model that answers as ``policy`` does: the policy engine reads the request, the double sends the reply."""
    chosen = Policy.model_validate_json(policy)
    return lambda body: Reply(tuple(chosen.answer(body)[1]["content"]))


@pytest.fixture
def provider(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Provider]:
    """The provider's Messages API and its quota API on loopback; what the provider bills drains the balance."""
    account = Account(key=PROVIDER_KEY)
    model = tool_loop if getattr(request, "param", None) == ENDLESS else scripted(policy_bytes())
    double = AnthropicDouble(keys=frozenset({PROVIDER_KEY}), model=model, on_bill=lambda cost: account.spend(str(cost)))
    with serve_double(double) as upstream, serve(account) as quota:
        monkeypatch.setenv(UPSTREAM_ENV, upstream)
        monkeypatch.setenv(QUOTA_ENV, quota)
        monkeypatch.setenv(KEY_ENV, PROVIDER_KEY)
        yield Provider(double, account)


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


BUDGET = Budget(
    attempts=1, max_usd_cents_per_pair=40, max_usd_cents_per_arm=25, max_tokens_per_arm=2_000_000,
    max_wall_seconds_per_arm=120,
)  # fmt: skip


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
        ended = arm_ending(record, BUDGET, tokens=0)
        assert ended.ending is ArmEnding.CAPPED and "reaching the arm's cap" in ended.note  # recorded as capped
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
    assert sum(arm.spent_usd for arm in ran["arms"].values()) == provider.double.billed_usd  # metered what was billed
