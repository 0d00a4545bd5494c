from __future__ import annotations

from bench.agent.pair import arm_order
from bench.agent.records import Condition


def test_arm_order_alternates_between_attempts() -> None:
    assert arm_order(1) == (Condition.CONTROL, Condition.TREATMENT)
    assert arm_order(2) == (Condition.TREATMENT, Condition.CONTROL)
    firsts = [arm_order(attempt)[0] for attempt in range(1, 11)]
    assert firsts.count(Condition.CONTROL) == firsts.count(Condition.TREATMENT) == 5
