"""destroy runs on every path out of a provisioned run; the fake provisioner's call log counts the calls."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bench.provision import Fixture, PairVerdict, ProvisionRefused, RefusalReason, provisioned
from bench.provision.protocol_call import CallRecord

REPO = Path(__file__).resolve().parents[2]


class AgentCrashed(Exception):
    pass


def _run(fake, root: Path, fixture: Fixture, body, timeout: float = 20.0) -> list[CallRecord]:
    log: list[CallRecord] = []

    async def go() -> None:
        async with provisioned(fake.provisioner(root, timeout=timeout), fixture, "plain", "run-1", log) as session:
            await body(session)

    asyncio.run(go())
    return log


async def _nothing(session) -> None:
    pass


def test_clean_run_destroys_once(fake, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    f = fake()
    _run(f, root, fixture, _nothing)
    assert f.calls() == ["restore", "destroy"]
    assert f.request("destroy") == {"project": "p1"}


def test_agent_failure_destroys(fake, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    f = fake()

    async def crash(session) -> None:
        raise AgentCrashed("the agent process died")

    with pytest.raises(AgentCrashed):
        _run(f, root, fixture, crash)
    assert f.calls() == ["restore", "destroy"]


def test_agent_timeout_destroys(fake, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    f = fake()

    async def slow_agent(session) -> None:
        await asyncio.wait_for(asyncio.sleep(30), timeout=0.2)

    with pytest.raises(TimeoutError):
        _run(f, root, fixture, slow_agent)
    assert f.calls() == ["restore", "destroy"]


def test_snapshot_timeout_is_an_invalid_receipt_and_destroys(fake, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    f = fake(snapshot="sleep")
    receipts = []

    async def snap(session) -> None:
        receipts.append(await session.snapshot())

    log = _run(f, root, fixture, snap, timeout=1.0)
    assert f.calls() == ["restore", "snapshot", "destroy"]
    (receipt,) = receipts
    assert receipt.verdict is PairVerdict.SNAPSHOT_REFUSED
    assert receipt.refusal is RefusalReason.TIMEOUT
    assert [c.refusal for c in log] == [None, RefusalReason.TIMEOUT, None]
    assert not f.alive("snapshot")


def test_refused_restore_that_named_a_project_is_destroyed(fake, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    f = fake(restore="extra")
    with pytest.raises(ProvisionRefused) as caught:
        _run(f, root, fixture, _nothing)
    assert caught.value.reason_code is RefusalReason.UNKNOWN_FIELDS
    assert f.calls() == ["restore", "destroy"]


def test_failed_restore_exit_that_named_a_project_is_destroyed(fake, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    f = fake(restore="exit")
    with pytest.raises(ProvisionRefused):
        _run(f, root, fixture, _nothing)
    assert f.calls() == ["restore", "destroy"]


def test_restore_that_named_no_project_cannot_be_destroyed(fake, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    f = fake(restore="garbage")
    with pytest.raises(ProvisionRefused):
        _run(f, root, fixture, _nothing)
    assert f.calls() == ["restore"]


def test_refused_destroy_does_not_mask_the_agent_failure(fake, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    f = fake(destroy="exit")

    async def crash(session) -> None:
        raise AgentCrashed

    log: list[CallRecord] = []
    with pytest.raises(AgentCrashed):

        async def go() -> None:
            async with provisioned(f.provisioner(root), fixture, "plain", "run-1", log):
                await crash(None)

        asyncio.run(go())
    assert f.calls() == ["restore", "destroy"]
    assert log[-1].refusal is RefusalReason.NONZERO_EXIT


def test_refused_destroy_after_a_clean_run_raises(fake, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    f = fake(destroy="garbage")
    with pytest.raises(ProvisionRefused) as caught:
        _run(f, root, fixture, _nothing)
    assert caught.value.verb == "destroy"


DRIVER = """
import asyncio, sys
from pathlib import Path
from bench.provision import Provisioner, load_fixture, provisioned

async def main():
    root = Path(sys.argv[1])
    provisioner = Provisioner((sys.executable, sys.argv[2]), root)
    async with provisioned(provisioner, load_fixture(root), "plain", "run-1") as session:
        print("agent running", flush=True)
        if sys.argv[3] == "snapshot":
            await session.snapshot()
        else:
            await asyncio.sleep(60)

asyncio.run(main())
"""


EXPECTED_CALLS = {
    "agent": ["restore", "destroy"],
    "snapshot": ["restore", "snapshot", "destroy"],
    # restore was interrupted before it named a project: there is nothing to address, and it was killed
    "restore": ["restore"],
}


@pytest.mark.parametrize("during", sorted(EXPECTED_CALLS))
def test_ctrl_c_destroys(fake, tiny_fixture, tmp_path: Path, during: str) -> None:
    root, _ = tiny_fixture
    f = fake(snapshot="sleep", restore="sleep" if during == "restore" else "ok")
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent(DRIVER))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, str(driver), str(root), f.prefix[1], during],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,  # its own foreground-like group, so the SIGINT below is what a terminal sends
    )
    try:
        assert proc.stdout is not None
        if during != "restore":
            assert proc.stdout.readline() == b"agent running\n"
        if during != "agent":
            _wait_for(lambda: during in f.calls())
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=180)  # a hang guard: a busy machine once needed more than 30 s
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0
    assert b"KeyboardInterrupt" in stderr
    assert f.calls() == EXPECTED_CALLS[during]
    if during != "agent":
        assert not f.alive(during)  # the interrupted provisioner was killed, not left sleeping


def _wait_for(condition, seconds: float = 120.0) -> None:  # a guard against a hang on a busy machine
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)
