from __future__ import annotations

import pytest

from bench.agent import arm_order
from bench.suite.memory_system import CONTROL

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes


def test_the_arm_order_rotates_so_no_condition_always_runs_first() -> None:
    systems = ("reference", "server-memory")
    assert arm_order(1, systems) == (CONTROL, "reference", "server-memory")
    assert arm_order(2, systems) == ("reference", "server-memory", CONTROL)
    assert arm_order(3, systems) == ("server-memory", CONTROL, "reference")
    firsts = [arm_order(attempt, systems)[0] for attempt in range(1, 10)]
    assert {condition: firsts.count(condition) for condition in (CONTROL, *systems)} == {
        CONTROL: 3,
        "reference": 3,
        "server-memory": 3,
    }
    assert {arm_order(attempt, ("one",)) for attempt in (1, 2)} == {(CONTROL, "one"), ("one", CONTROL)}
