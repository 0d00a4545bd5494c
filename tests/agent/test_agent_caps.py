"""The caps of an attempt's arms, without containers: each arm's cap keeps every pair within the pair cap, an arm
its pairs leave no room stops the attempt (recorded, the account latched), and the preflight acknowledges the most
the arms can spend under those caps, which the gateway never lets an arm pass."""

from __future__ import annotations

import itertools
from decimal import Decimal

import pytest
from forward_scenario import settings

from bench.agent.attempt import arm_caps, arm_order, cap_or_stop
from bench.fence import AccountStopped, CheckName, Fence, FenceOutcome, FenceStopped, open_account, read_record
from bench.store import Store
from bench.suite.memory_system import CONTROL


def test_an_arm_its_pairs_leave_no_room_stops_the_attempt_with_a_record(store: Store) -> None:
    forward = settings(arm_cap="2", pair_cap="2")
    account = forward.fence.key_sha256  # type: ignore[union-attr]
    fence = Fence(store, "c.1", None, account=account)
    fence.not_applicable("no quota API in this test")
    assert cap_or_stop(fence, forward, CONTROL, {}) == Decimal("2")
    assert cap_or_stop(fence, forward, "reference", {CONTROL: Decimal("1.5")}) == Decimal("0.5")
    with pytest.raises(FenceStopped, match="fence resume --reason") as stopped:
        cap_or_stop(fence, forward, "reference", {CONTROL: Decimal("2")})
    document, checks = read_record(store, stopped.value.record)
    assert document.outcome is FenceOutcome.STOPPED and checks[-1].check is CheckName.PAIR_CAP
    assert checks[-1].observed_usd == {
        "control_spent_usd": Decimal("2"),
        "arm_cap_usd": Decimal("2"),
        "pair_cap_usd": Decimal("2"),
        "room_usd": Decimal("0"),
    }
    with pytest.raises(AccountStopped, match="fence resume"):
        open_account(store, account)  # the next attempt against this key spends nothing


@pytest.mark.parametrize(
    ("arm_cap", "pair_cap", "treatments"), [("2", "5", 2), ("2", "3", 1), ("2", "3", 3), ("1", "1", 2)]
)
def test_the_preflight_bound_is_the_most_the_arms_can_spend_under_their_caps(
    arm_cap: str, pair_cap: str, treatments: int
) -> None:
    """Brute force over every order and every spending on a grid: no arm past its cap as arm_caps lowers it."""
    forward = settings(arm_cap=arm_cap, pair_cap=pair_cap)
    systems = tuple(f"s{n}" for n in range(treatments))
    grid = [Decimal(n) / 4 * forward.arm_cap_usd for n in range(5)]
    most = Decimal(0)
    for attempt in range(1, treatments + 2):
        order = arm_order(attempt, systems)
        for shares in itertools.product(grid, repeat=len(order)):
            spent: dict[str, Decimal] = {}
            for condition, share in zip(order, shares, strict=True):
                spent[condition] = min(share, max(arm_caps(forward, condition, spent), Decimal(0)))
            most = max(most, sum(spent.values(), Decimal(0)))
    assert forward.attempt_bound_usd(treatments) == most
    assert most < forward.arm_cap_usd * (treatments + 1) or Decimal(pair_cap) >= 2 * Decimal(arm_cap)
