"""Forward mode end to end, with the real CLI in real containers: the gateway relays each arm to a provider on a
loopback socket, meters it per arm in exact decimals and holds it under its cap; the money fence reads an
OpenRouter-shaped quota API on another loopback socket (forward_scenario.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal

import pytest
from agent_scenario import RECALL_PHRASE, Inputs, memory_declaration, neutral_dir
from forward_scenario import ENDLESS, PROVIDER_KEY, CountingBackend, Provider, attempt, settings

from bench.agent import read_exchange_log
from bench.agent.arm_ending import arm_ending
from bench.analysis.attempt_record import ArmEnding
from bench.analysis.prereg import Budget
from bench.cli import main
from bench.errors import FenceError
from bench.fence import AccountStopped, FenceStopped, resume_account, stopped_accounts
from bench.fence.fence import read_record
from bench.fence.fence_record import CheckName, CheckVerdict, FenceOutcome
from bench.gateway import ArmStop, ChargeBasis, Refusal
from bench.grading import grade_delivery
from bench.grading.chain import harness_conversation
from bench.harness.claude_code.session_log import parse_claude_session
from bench.store import Store
from bench.suite.memory_system import CONTROL
from tests.fence.fence_provider_double import CREDITS_PATH, Failure
from tests.gateway.loopback import Fault, Usage

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

BUDGET = Budget(
    attempts=1, max_usd_cents_per_pair=300, max_usd_cents_per_arm=200, max_tokens_per_arm=2_000_000,
    max_wall_seconds_per_arm=120,
)  # fmt: skip


def _stored_bytes(store: Store) -> Iterator[bytes]:
    for digest in store.digests():
        yield store.get_bytes(digest)


@pytest.mark.parametrize("provider", [ENDLESS], indirect=True)
def test_spending_is_metered_per_arm_and_the_caps_stop_an_endless_model(
    provider: Provider, inputs: Inputs, agent_image: str
) -> None:
    ran = attempt(inputs, agent_image, settings(arm_cap="1.2", pair_cap="1.5"), neutral_dir())
    control, treatment = ran.arms[CONTROL], ran.arms["reference"]
    for record in (control, treatment):
        exchanges = read_exchange_log(inputs.store, record.exchanges)
        assert record.spent_usd == sum((e.cost_usd for e in exchanges), Decimal(0)) > 0  # exact, per arm
        assert record.cap_usd is not None and record.spent_usd <= record.cap_usd  # a hard bound...
        last = exchanges[-1]
        assert last.refusal is Refusal.CAP_REACHED and "spending cap" in json.dumps(last.response_body)
        assert last.worst_case_usd is not None and record.spent_usd + last.worst_case_usd > record.cap_usd  # ...hit
        assert record.cap_refusals >= 1 and record.stop is None and record.bounded_answers == 0
        ended = arm_ending(record, BUDGET, tokens=0)
        assert ended.ending is ArmEnding.CAPPED and "reaching the arm's cap" in ended.note  # recorded as capped
    assert control.cap_usd == Decimal("1.2")  # the control ran first (attempt 1): the per-arm cap
    assert treatment.cap_usd == Decimal("1.5") - control.spent_usd  # the pair cap lowered the second arm's cap
    assert control.spent_usd + treatment.spent_usd <= Decimal("1.5")  # so the pair stays within the pair cap
    assert ran.pair.order == (CONTROL, "reference")
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
    resume_account(inputs.store, settings().fence.key_sha256, "the test restored the key")  # type: ignore[union-attr]


def test_a_429_between_the_arms_is_recorded_unobserved_and_the_pair_goes_on(
    provider: Provider, inputs: Inputs, agent_image: str
) -> None:
    provider.account.failures[CREDITS_PATH] = Failure.RATE_LIMITED
    provider.account.healthy[CREDITS_PATH] = 1  # preflight reads the balance; the drain check gets 429
    ran = attempt(inputs, agent_image, settings(), neutral_dir())
    assert set(ran.arms) == {CONTROL, "reference"} and all(arm.steps for arm in ran.arms.values())
    record, checks = read_record(inputs.store, ran.fence)
    assert record.outcome is FenceOutcome.CLEARED
    assert [(c.check, c.verdict) for c in checks] == [
        (CheckName.KEY_IDENTITY, CheckVerdict.PASSED),
        (CheckName.KEY_BUDGET, CheckVerdict.PASSED),
        (CheckName.SHARED_HEADROOM, CheckVerdict.PASSED),
        (CheckName.OBSERVED_DRAIN, CheckVerdict.UNOBSERVED),
    ]
    assert "429" in checks[-1].reason
    assert all(arm.spent_usd > 0 for arm in ran.arms.values())
    assert sum(arm.spent_usd for arm in ran.arms.values()) == provider.double.billed_usd  # metered what was billed


def test_an_answer_with_absurd_usage_cannot_take_an_arm_past_its_cap(
    provider: Provider, inputs: Inputs, agent_image: str
) -> None:
    """The issue's finding: 10,000,000 output tokens against max_tokens 32,000 metered 150 USD on a 2 USD cap."""
    provider.double.usage = Usage.ABSURD
    CountingBackend.sessions = 0
    ran = attempt(inputs, agent_image, settings(arm_cap="2", pair_cap="3"), neutral_dir())
    control, treatment = ran.arms[CONTROL], ran.arms["reference"]
    exchanges = read_exchange_log(inputs.store, control.exchanges)
    first = exchanges[0]
    assert first.charge is ChargeBasis.OUT_OF_BOUNDS and first.usage is not None and first.usage.output_tokens == 10**7
    assert control.spent_usd == first.cost_usd == first.worst_case_usd <= Decimal("2")  # charged its bound
    assert control.stop is ArmStop.PROVIDER_MALFORMED and control.bounded_answers == 1 and control.usage_bounded
    assert all(e.refusal is Refusal.PROVIDER_MALFORMED for e in exchanges[1:] if e.method == "POST")
    assert provider.requests() == 1  # nothing after the malformed answer reached the provider
    assert not treatment.started and treatment.steps == () and CountingBackend.sessions == 1  # no treatment started
    ended = {name: arm_ending(arm, BUDGET, tokens=0) for name, arm in ran.arms.items()}
    assert {e.ending for e in ended.values()} == {ArmEnding.PROVIDER_MALFORMED}
    assert "not started" in ended["reference"].note


@pytest.mark.parametrize("status", [401, 429, 529, 500])
def test_a_provider_failing_every_request_ends_the_control_provider_failed_within_three_requests(
    status: int, provider: Provider, inputs: Inputs, agent_image: str
) -> None:
    if status == 401:
        provider.double.keys = frozenset({"sk-ant-api03-a-key-the-gateway-does-not-hold"})
    else:
        fault = {429: Fault.RATE_LIMITED, 529: Fault.OVERLOADED, 500: Fault.SERVER_ERROR}[status]
        provider.double.faults = [fault] * 50
    CountingBackend.sessions = 0
    ran = attempt(inputs, agent_image, settings(), neutral_dir())
    control, treatment = ran.arms[CONTROL], ran.arms["reference"]
    assert provider.requests() == 3  # the fourth request was the gateway's to refuse
    exchanges = read_exchange_log(inputs.store, control.exchanges)
    relayed = [e.status for e in exchanges if e.method == "POST" and e.refusal is None]
    assert relayed == [status] * 3 and exchanges[-1].refusal is Refusal.PROVIDER_FAILED
    assert control.stop is ArmStop.PROVIDER_FAILED and control.spent_usd == 0
    assert not treatment.started and CountingBackend.sessions == 1  # no treatment arm started
    assert arm_ending(control, BUDGET, tokens=0).ending is ArmEnding.PROVIDER_FAILED
    assert arm_ending(treatment, BUDGET, tokens=0).ending is ArmEnding.PROVIDER_FAILED


def test_a_treatment_whose_provider_failed_is_not_graded_delivered(
    provider: Provider, inputs: Inputs, agent_image: str
) -> None:
    """Attempt 2 runs the treatment first: its hook put the memory into every request the gateway received, but no
    model answered one, so nothing was delivered (the issue's run graded it "memory delivered")."""
    provider.double.faults = [Fault.OVERLOADED] * 50
    ran = attempt(inputs, agent_image, settings(), neutral_dir(), number=2)
    treatment, control = ran.arms["reference"], ran.arms[CONTROL]
    assert ran.pair.order == ("reference", CONTROL) and not control.started
    assert treatment.stop is ArmStop.PROVIDER_FAILED and treatment.session is not None
    exchanges = read_exchange_log(inputs.store, treatment.exchanges)
    assert any(RECALL_PHRASE in json.dumps(e.request_body) for e in exchanges)  # it reached the gateway...
    transcript = parse_claude_session(
        inputs.store.get_bytes(treatment.session), [inputs.store.get_bytes(step.stream) for step in treatment.steps]
    )
    conversation = harness_conversation(exchanges, treatment.runner())
    graded = grade_delivery(transcript, conversation, memory_declaration(inputs.store, inputs.fixture))
    assert not graded.delivered and not any(channel.gateway_phrases for channel in graded.channels)  # ...no model


def test_an_arm_whose_answers_report_no_usage_is_marked_bounded(
    provider: Provider, inputs: Inputs, agent_image: str
) -> None:
    provider.double.usage = Usage.OMITTED
    ran = attempt(inputs, agent_image, settings(arm_cap="5", pair_cap="10"), neutral_dir())
    for arm in ran.arms.values():
        answered = [e for e in read_exchange_log(inputs.store, arm.exchanges) if e.status == 200]
        assert answered and all(e.charge is ChargeBasis.UPPER_BOUND for e in answered)
        assert arm.usage_bounded and arm.bounded_answers == len(answered) and arm.bounded_usd == arm.spent_usd
        assert arm.spent_usd <= (arm.cap_usd or 0) and arm.stop is None
    _, checks = read_record(inputs.store, ran.fence)
    drain = checks[-1].observed_usd
    assert drain["declared_bounded_usd"] == ran.arms[CONTROL].spent_usd  # the drain check says how loose it is


def test_a_drain_stop_latches_the_account_and_a_rerun_refuses_until_the_operator_resumes(
    provider: Provider, inputs: Inputs, agent_image: str, capsys: pytest.CaptureFixture[str]
) -> None:
    provider.account.limit = Decimal("100")
    provider.double.on_bill = lambda cost: provider.account.spend(str(cost * 40))  # the account drains faster
    home = neutral_dir()
    with pytest.raises(FenceStopped, match="fence resume --reason") as stopped:
        attempt(inputs, agent_image, settings(), home)
    record, checks = read_record(inputs.store, stopped.value.record)
    assert record.outcome is FenceOutcome.STOPPED and checks[-1].check is CheckName.OBSERVED_DRAIN
    assert checks[-1].checked_at is not None and checks[-1].observed_usd["drained_usd"] > 0  # figures and time
    account = settings().fence.key_sha256  # type: ignore[union-attr]
    assert stopped_accounts(inputs.store) == {account: stopped.value.record}

    CountingBackend.sessions, before = 0, (provider.requests(), len(provider.account.requests))
    with pytest.raises(AccountStopped) as refused:
        attempt(inputs, agent_image, settings(), home)
    assert isinstance(refused.value, FenceError) and refused.value.exit_code == 12
    assert "stele-bench fence resume --reason TEXT" in str(refused.value)
    assert CountingBackend.sessions == 0 and (provider.requests(), len(provider.account.requests)) == before

    argv = ["--store", str(inputs.store.location), "--json", "fence", "resume", "--reason", "the drain was a test"]
    assert main(argv) == 0
    decision = json.loads(capsys.readouterr().out)["decision"]
    provider.double.on_bill = lambda cost: provider.account.spend(str(cost))
    ran = attempt(inputs, agent_image, settings(), home)
    assert all(arm.started and arm.steps for arm in ran.arms.values())
    assert read_record(inputs.store, ran.fence)[0].resumed == decision  # the decision travels with the records
