"""Checks 1-3 against a quota API on a real loopback socket; every outcome is read back from the store."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest
from fence_provider_double import CREDITS_PATH, KEY, KEY_ENV, KEY_PATH, Account, Failure

from bench.contracts import Digest
from bench.errors import ContractError
from bench.fence import CheckName, CheckVerdict, Fence, FenceConfig, FenceOutcome, FenceStopped, read_record
from bench.store import Store


def _verdicts(store: Store, record: Digest) -> list[tuple[CheckName, CheckVerdict]]:
    document, checks = read_record(store, record)
    assert all(check.pair == document.pair for check in checks)
    return [(check.check, check.verdict) for check in checks]


def _stopped(make_fence: Callable[..., Fence], **fence_args: object) -> FenceStopped:
    with pytest.raises(FenceStopped) as caught:
        make_fence(**fence_args).preflight(Decimal("5"))
    return caught.value


def test_a_matching_key_with_a_ceiling_and_headroom_is_cleared(store: Store, make_fence: Callable[..., Fence]) -> None:
    record = make_fence().preflight(Decimal("5"))
    document, checks = read_record(store, record)
    assert document.outcome is FenceOutcome.CLEARED and document.pair == "p1"
    assert [c.check for c in checks] == [CheckName.KEY_IDENTITY, CheckName.KEY_BUDGET, CheckName.SHARED_HEADROOM]
    assert all(c.verdict is CheckVerdict.PASSED for c in checks)
    assert checks[1].observed_usd["limit_usd"] == Decimal("10")
    assert checks[2].observed_usd == {
        "balance_usd": Decimal("100"),
        "reserve_usd": Decimal("50"),
        "pair_cap_usd": Decimal("5"),
        "required_usd": Decimal("55"),
    }


def test_a_mismatching_fingerprint_stops_before_the_key_leaves_the_process(
    store: Store, make_fence: Callable[..., Fence], account: Account
) -> None:
    stop = _stopped(make_fence, key="sk-or-v1-the-production-key")
    assert stop.check == CheckName.KEY_IDENTITY and "expected" in str(stop)
    assert _verdicts(store, stop.record) == [(CheckName.KEY_IDENTITY, CheckVerdict.FAILED)]
    assert account.requests == []
    assert not any(b"the-production-key" in store.get_bytes(d) for d in store.digests())


def test_an_unset_key_variable_fails_identity_naming_the_variable(
    store: Store, make_fence: Callable[..., Fence]
) -> None:
    stop = _stopped(make_fence, key=None)
    assert KEY_ENV in str(stop)
    assert _verdicts(store, stop.record) == [(CheckName.KEY_IDENTITY, CheckVerdict.FAILED)]


def test_a_key_with_a_null_limit_fails_the_budget_check(
    store: Store, make_fence: Callable[..., Fence], account: Account
) -> None:
    account.limit = None
    stop = _stopped(make_fence)
    assert stop.check == CheckName.KEY_BUDGET and "limit is null" in str(stop)
    assert _verdicts(store, stop.record) == [
        (CheckName.KEY_IDENTITY, CheckVerdict.PASSED),
        (CheckName.KEY_BUDGET, CheckVerdict.FAILED),
    ]
    assert account.requests == [KEY_PATH]


def test_a_key_whose_remaining_limit_is_below_the_pair_cap_fails_the_budget_check(
    store: Store, make_fence: Callable[..., Fence], account: Account
) -> None:
    account.spend("5.01")  # limit 10, remaining 4.99 < the pair cap 5
    stop = _stopped(make_fence)
    assert stop.check == CheckName.KEY_BUDGET
    assert "remaining limit 4.99 USD is below the pair cap 5 USD" in str(stop)
    _, checks = read_record(store, stop.record)
    assert checks[1].observed_usd["limit_remaining_usd"] == Decimal("4.99")
    assert [c.check for c in checks] == [CheckName.KEY_IDENTITY, CheckName.KEY_BUDGET]
    account.usage = Decimal("5")  # exactly the pair cap left: cleared
    record = make_fence(pair="p2").preflight(Decimal("5"))
    assert read_record(store, record)[0].outcome is FenceOutcome.CLEARED


def test_insufficient_headroom_fails_with_the_exact_shortfall(
    store: Store, make_fence: Callable[..., Fence], account: Account
) -> None:
    account.total_credits, account.total_usage = Decimal("60.10"), Decimal("5.20")
    stop = _stopped(make_fence)
    assert stop.check == CheckName.SHARED_HEADROOM and "short by 0.10" in str(stop)
    _, checks = read_record(store, stop.record)
    assert checks[-1].verdict is CheckVerdict.FAILED
    assert checks[-1].observed_usd["balance_usd"] == Decimal("54.90")
    assert checks[-1].observed_usd["required_usd"] == Decimal("55")


def test_headroom_is_decided_in_exact_decimal_not_float(store: Store, config: FenceConfig, account: Account) -> None:
    # In float, 0.3 - 0.1 = 0.19999999999999998 < 0.1 + 0.1: the exact balance covers the need to the cent.
    account.total_credits, account.total_usage = Decimal("0.3"), Decimal("0.1")
    fence = Fence(store, "p1", config.model_copy(update={"production_reserve_usd": Decimal("0.1")}), {KEY_ENV: KEY})
    _, checks = read_record(store, fence.preflight(Decimal("0.1")))
    assert checks[-1].verdict is CheckVerdict.PASSED and checks[-1].observed_usd["balance_usd"] == Decimal("0.2")


def test_a_revoked_key_fails_preflight_closed(store: Store, make_fence: Callable[..., Fence], account: Account) -> None:
    account.reject_key = True
    stop = _stopped(make_fence)
    assert stop.check == CheckName.KEY_BUDGET and "401" in str(stop) and "User not found." in str(stop)
    assert KEY not in str(stop)


@pytest.mark.parametrize("failure", [Failure.CLOSE, Failure.UNAVAILABLE])
def test_an_unreachable_balance_at_preflight_is_unobserved_and_stops(
    store: Store, make_fence: Callable[..., Fence], account: Account, failure: Failure
) -> None:
    """Nothing is spent yet, so an unproven headroom is no headroom: preflight fails closed on it."""
    account.failures[CREDITS_PATH] = failure
    stop = _stopped(make_fence)
    assert _verdicts(store, stop.record)[-1] == (CheckName.SHARED_HEADROOM, CheckVerdict.UNOBSERVED)


def test_money_must_arrive_as_decimal(make_fence: Callable[..., Fence], account: Account) -> None:
    with pytest.raises(ContractError, match="pair_cap must be a finite, non-negative Decimal"):
        make_fence().preflight(5.0)
    with pytest.raises(ContractError, match="got Decimal\\('-1'\\)"):
        make_fence().preflight(Decimal("-1"))
    assert account.requests == []


def test_a_pair_is_preflighted_once(make_fence: Callable[..., Fence]) -> None:
    fence = make_fence()
    fence.preflight(Decimal("5"))
    with pytest.raises(ContractError, match="already has fence checks"):
        fence.preflight(Decimal("5"))
