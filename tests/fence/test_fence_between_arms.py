"""Check 4 inside a pair modelled as two callables: a stop means the second arm is never called."""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal

import pytest
from fence_provider_double import CREDITS_PATH, KEY, Account, Failure

from bench.contracts import Digest
from bench.errors import ContractError, FenceError
from bench.fence import ArmCap, CheckName, CheckVerdict, Fence, FenceOutcome, FenceStopped, PairCaps, read_record
from bench.store import Store

CAPS = PairCaps(arms=(ArmCap(arm="first", cap_usd=Decimal("2.50")), ArmCap(arm="second", cap_usd=Decimal("2.50"))))


class Pair:
    """The paired runner's use of the fence, reduced to its order: preflight, arm, check, arm."""

    def __init__(self, fence: Fence, first: Callable[[], None]) -> None:
        self.fence, self.first = fence, first
        self.arms_run: list[str] = []

    def second(self) -> None:
        self.arms_run.append("second")

    def run(self) -> Digest:
        self.fence.preflight(CAPS.pair_cap_usd)
        self.first()
        self.arms_run.append("first")
        record = self.fence.between_arms(CAPS.cap_of("first"))
        self.second()
        return record


def _last_check(store: Store, record: Digest) -> tuple[FenceOutcome, CheckName, CheckVerdict, str]:
    document, checks = read_record(store, record)
    assert [c.check for c in checks[:3]] == [CheckName.KEY_IDENTITY, CheckName.KEY_BUDGET, CheckName.SHARED_HEADROOM]
    return document.outcome, checks[-1].check, checks[-1].verdict, checks[-1].reason


def test_a_drain_within_the_declared_amount_lets_the_second_arm_run(
    store: Store, make_fence: Callable[..., Fence], account: Account
) -> None:
    pair = Pair(make_fence(), lambda: account.spend("2.50"))
    record = pair.run()
    assert pair.arms_run == ["first", "second"]
    assert _last_check(store, record)[:3] == (FenceOutcome.CLEARED, CheckName.OBSERVED_DRAIN, CheckVerdict.PASSED)
    _, checks = read_record(store, record)
    assert checks[-1].observed_usd["drained_usd"] == Decimal("2.50")


def test_a_drain_beyond_the_declared_amount_stops_before_the_second_arm(
    store: Store, make_fence: Callable[..., Fence], account: Account
) -> None:
    """Something else on the account spent too: over-attributed to the pair on purpose, and the pair stops."""
    pair = Pair(make_fence(), lambda: account.spend("2.51"))
    with pytest.raises(FenceStopped) as caught:
        pair.run()
    assert pair.arms_run == ["first"]
    assert caught.value.check == CheckName.OBSERVED_DRAIN
    assert _last_check(store, caught.value.record)[:3] == (
        FenceOutcome.STOPPED,
        CheckName.OBSERVED_DRAIN,
        CheckVerdict.FAILED,
    )
    _, checks = read_record(store, caught.value.record)
    assert checks[-1].observed_usd == {
        "baseline_usd": Decimal("100"),
        "balance_usd": Decimal("97.49"),
        "drained_usd": Decimal("2.51"),
        "declared_usd": Decimal("2.50"),
    }
    with pytest.raises(FenceError):
        pair.fence.between_arms(Decimal("100"))  # a stopped pair stays stopped


def test_a_key_rejected_after_preflight_stops_before_the_second_arm(
    store: Store, make_fence: Callable[..., Fence], account: Account
) -> None:
    def first() -> None:
        account.spend("1")
        account.reject_key = True  # the key was revoked or rotated while the first arm ran

    pair = Pair(make_fence(), first)
    with pytest.raises(FenceStopped, match="rejected the key with 401: User not found") as caught:
        pair.run()
    assert pair.arms_run == ["first"]
    outcome, check, verdict, reason = _last_check(store, caught.value.record)
    assert (outcome, check, verdict) == (FenceOutcome.STOPPED, CheckName.OBSERVED_DRAIN, CheckVerdict.FAILED)
    assert KEY not in reason


@pytest.mark.parametrize("failure", [Failure.CLOSE, Failure.UNAVAILABLE, Failure.HANG])
def test_a_transport_error_on_the_balance_read_continues_recorded_unobserved(
    store: Store, make_fence: Callable[..., Fence], account: Account, failure: Failure
) -> None:
    def first() -> None:
        account.spend("1")
        account.failures[CREDITS_PATH] = failure

    pair = Pair(make_fence(), first)
    record = pair.run()
    assert pair.arms_run == ["first", "second"]
    outcome, check, verdict, reason = _last_check(store, record)
    assert (outcome, check, verdict) == (FenceOutcome.CLEARED, CheckName.OBSERVED_DRAIN, CheckVerdict.UNOBSERVED)
    assert reason.startswith("not observed: GET http://127.0.0.1:")
    assert account.requests[-1] == CREDITS_PATH


def test_a_malformed_balance_answer_fails_closed(
    store: Store, make_fence: Callable[..., Fence], account: Account
) -> None:
    """Not a flaky transport: the provider answered something undocumented, so the drain is unknown."""
    pair = Pair(make_fence(), lambda: account.bodies.update({CREDITS_PATH: b'{"data": {"total_credits": 100}}'}))
    with pytest.raises(FenceStopped, match=re.escape("no `data.total_usage`")):
        pair.run()
    assert pair.arms_run == ["first"]


def test_no_arm_starts_without_a_cleared_preflight(make_fence: Callable[..., Fence], account: Account) -> None:
    with pytest.raises(FenceError, match="not cleared by preflight"):
        make_fence().between_arms(Decimal("1"))
    account.limit = None
    fence = make_fence(pair="p2")
    with pytest.raises(FenceStopped):
        fence.preflight(Decimal("5"))
    with pytest.raises(FenceError, match="not cleared by preflight"):
        fence.between_arms(Decimal("1"))


def test_a_pair_without_a_paid_provider_records_not_applicable_explicitly(store: Store) -> None:
    fence = Fence(store, "policy-pair", None)
    document, checks = read_record(store, fence.not_applicable())
    assert document.outcome is FenceOutcome.NOT_APPLICABLE
    assert [c.check for c in checks] == list(CheckName)
    assert {(c.verdict, c.reason) for c in checks} == {
        (CheckVerdict.NOT_APPLICABLE, "fence not applicable: no paid provider")
    }
    with pytest.raises(ContractError, match="needs a fence config"):
        fence.preflight(Decimal("1"))
    with pytest.raises(ContractError, match="already has fence checks"):
        fence.not_applicable()
    with pytest.raises(FenceError):
        fence.between_arms(Decimal("0"))


def test_the_key_is_in_no_stored_object(store: Store, make_fence: Callable[..., Fence], account: Account) -> None:
    account.reject_key = True
    with pytest.raises(FenceStopped):
        make_fence().preflight(Decimal("5"))
    assert not any(KEY.encode() in store.get_bytes(d) for d in store.digests())
