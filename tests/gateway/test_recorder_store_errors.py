"""A store outage while the gateway records (issue 36, build item 3): the store's error keeps its family.

The gateway records each exchange from the request's own thread, after the answer was sent; an error there used to
die with the thread, and the arm then ended in "exchanges were lost before the log" (a gateway error, exit 13). The
recorder keeps the store's first error and raises it when the log is written, so the run stops with the store's exit
code and the store's message. A real gateway on loopback, a real SQLite store whose directory goes away mid-arm, as
a store on a disk that was unplugged: a request thread's new connection cannot open the index.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from loopback import KEY, arm, post, request_body, write_policy

from bench.agent.recorder import StoreRecorder
from bench.errors import StoreError
from bench.gateway import Gateway, GatewayConfig, Mode
from bench.store import Store


def test_a_store_outage_during_an_arm_is_raised_as_the_stores_error_when_the_log_is_written(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    recorder = StoreRecorder(store)
    config = GatewayConfig(mode=Mode.POLICY, arms=(arm("one", KEY),), policy=write_policy(tmp_path))
    with Gateway(config, recorder, policy_root=tmp_path) as gateway:
        assert post(gateway.url, "/v1/messages?beta=true", request_body("before")).status == 200
        (tmp_path / "store").rename(tmp_path / "store-unplugged")
        answer = post(gateway.url, "/v1/messages?beta=true", request_body("after"))
        assert answer.status == 200  # the agent got its answer; only the record failed
    with pytest.raises(StoreError) as raised:
        recorder.finish()
    assert type(raised.value) is StoreError and raised.value.exit_code == 8  # the store's family, not the gateway's
    assert str(tmp_path / "store") in str(raised.value)
