"""Forward mode with the real CLI in real containers: the provider on loopback sockets, and an attempt against it.

The provider is ``tests/gateway/loopback.py``'s AnthropicDouble (the Messages API as documented, its own key only),
its model scripted by a policy or by a tool loop; each amount it bills moves the balance of the OpenRouter-shaped
quota API (``tests/fence/fence_provider_double.py``) the fence reads. Neither URL nor key is in the settings: they
name the environment variables that hold them. The ``provider`` fixture (conftest.py) serves both.

The CLI asks for ``max_tokens`` 32,000 in requests of about 75 KB, so one request's worst case (what the gateway holds
against the arm's cap) is about 0.78 USD at these prices while the double bills a few cents a turn: the caps here
are dollars, not cents.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path, PurePosixPath
from typing import Any

from agent_scenario import MODEL, Inputs, challenge, policy_bytes, reference_system, workspace_tree

from bench.agent import ArmRecord, ArmRun, AttemptSetup, PairRecord, run_attempt
from bench.contracts import Digest, Sha256
from bench.gateway import Mode, Policy, Price
from bench.gateway.dialects.anthropic import AnthropicMessages
from bench.provision import load_fixture
from bench.sandbox.backends import ModelNetwork, Session
from bench.sandbox.backends.docker import DockerBackend
from bench.sandbox.spec import ContainerSpec
from bench.suite.forward import FenceDeclaration, ForwardSettings
from bench.suite.memory_system import CONTROL
from tests.fence.fence_provider_double import Account, serve
from tests.gateway.loopback import AnthropicDouble, Reply, serve_double, tool_loop

PROVIDER_KEY = "sk-ant-api03-planted-provider-key-0123456789abcdef"
PRICE = Price(
    input=Decimal("3"), output=Decimal("15"), cache_write=Decimal("3.75"), cache_read=Decimal("0.30")
)  # its RATES
UPSTREAM_ENV, KEY_ENV, QUOTA_ENV = "TEST_PROVIDER_URL", "TEST_PROVIDER_KEY", "TEST_QUOTA_URL"
ENDLESS = "endless"  # a model that keeps asking for more turns: every answer is another tool call

MESSAGES = AnthropicMessages()


class CountingBackend(DockerBackend):
    """The real Docker backend, counting the containers it is asked to start."""

    sessions = 0

    def _session(
        self,
        spec: ContainerSpec,
        workspace: Digest,
        home_dirs: tuple[PurePosixPath, ...],
        network: ModelNetwork | None,
    ) -> AbstractContextManager[Session]:
        type(self).sessions += 1  # the hook: the base's session() checked the spec first
        return super()._session(spec, workspace, home_dirs, network)


@dataclass
class Provider:
    double: AnthropicDouble
    account: Account

    def requests(self) -> int:
        return len(self.double.received)


def scripted(policy: bytes) -> Callable[[dict[str, Any]], Reply]:
    """A model that answers as ``policy`` does: the policy engine reads the request, the double sends the reply."""
    chosen = Policy.model_validate_json(policy)
    return lambda body: Reply(tuple(MESSAGES.answer(chosen, body)[1]["content"]))


@contextmanager
def serve_provider(endless: bool, setenv: Callable[[str, str], None]) -> Iterator[Provider]:
    """The provider's Messages API and its quota API on loopback; what the provider bills drains the balance."""
    account = Account(key=PROVIDER_KEY)
    model = tool_loop if endless else scripted(policy_bytes())
    double = AnthropicDouble(keys=frozenset({PROVIDER_KEY}), model=model, on_bill=lambda cost: account.spend(str(cost)))
    with serve_double(double) as upstream, serve(account) as quota:
        setenv(UPSTREAM_ENV, upstream)
        setenv(QUOTA_ENV, quota)
        setenv(KEY_ENV, PROVIDER_KEY)
        yield Provider(double, account)


def settings(arm_cap: str = "5", pair_cap: str = "10") -> ForwardSettings:
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


@dataclass(frozen=True)
class Ran:
    arms: dict[str, ArmRecord]
    pair: PairRecord
    fence: Digest


def attempt(
    inputs: Inputs, agent_image: str, forward: ForwardSettings, home: Path, timeout: int = 120, number: int = 1
) -> Ran:
    """Attempt ``number`` of the scenario in forward mode, the reference memory its one system."""
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
    done = run_attempt(run, setup, attempt=number)
    store = inputs.store
    arms = {CONTROL: store.get_document(done.control, ArmRecord)}
    arms["reference"] = store.get_document(done.treatments["reference"], ArmRecord)
    return Ran(arms, store.get_document(done.pairs["reference"], PairRecord), done.fence)
