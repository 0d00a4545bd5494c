from __future__ import annotations

from bench.agent.arm_record import Condition
from bench.agent.pair import arm_order


def test_arm_order_alternates_between_attempts() -> None:
    assert arm_order(1) == (Condition.CONTROL, Condition.TREATMENT)
    assert arm_order(2) == (Condition.TREATMENT, Condition.CONTROL)
    firsts = [arm_order(attempt)[0] for attempt in range(1, 11)]
    assert firsts.count(Condition.CONTROL) == firsts.count(Condition.TREATMENT) == 5
