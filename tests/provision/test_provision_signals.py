"""A stop signal to `stele-bench provision ...` ends the provisioner and is reported as what it was (issue 17, 5).

Real signals to a real `python -m bench` process, whose provisioner (a real process in its own session, with a
child of its own) is hanging mid-restore.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.provision.conftest import FAKE_PROVISIONER, write_fixture

# A provisioner that starts a helper in its own process group, then hangs: a stop must end both.
HANGING = FAKE_PROVISIONER.replace(
    'elif mode == "sleep":\n    time.sleep(60)',
    'elif mode == "sleep":\n'
    "    import subprocess\n"
    '    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])\n'
    '    open(os.path.join(here, "helper.pid"), "w").write(str(helper.pid))\n'
    "    time.sleep(120)",
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie no one reaped yet has ended; only its table entry is left
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def _wait_for(path: Path, seconds: float = 30.0) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


@pytest.mark.parametrize(
    ("signum", "code", "said"),
    [(signal.SIGTERM, 143, "interrupted by SIGTERM"), (signal.SIGINT, 130, "interrupted by SIGINT")],
    ids=["SIGTERM", "SIGINT"],
)
def test_a_stop_signal_ends_the_provisioner_and_is_reported_as_itself(
    tmp_path: Path, signum: int, code: int, said: str
) -> None:
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "prov.py").write_text(HANGING)
    (fake / "behaviour.json").write_text(json.dumps({"restore": "sleep"}))
    fixture = tmp_path / "fixture"
    write_fixture(fixture)
    command = [sys.executable, "-m", "bench", "--store", str(tmp_path / "store"), "--json", "provision", "restore"]
    command += ["--provisioner", f"{sys.executable} {fake / 'prov.py'}", "--fixture-root", str(fixture)]
    command += ["--graph-arm", "plain", "--run-identity", "run-1", "--timeout", "60"]
    runner = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        provisioner = _wait_for(fake / "restore.pid")
        helper = _wait_for(fake / "helper.pid")
        runner.send_signal(signum)
        out, err = runner.communicate(timeout=180)  # a hang guard, generous for a busy machine
    finally:
        runner.kill()
    assert runner.returncode == code, err
    assert json.loads(out)["error"] == {
        "code": "interrupted",
        "type": "Interrupted",
        "message": said,
        "signal": signal.Signals(signum).name,
        "exit_code": code,
    }
    assert said in err and "timeout" not in err and "Traceback" not in err
    deadline = time.monotonic() + 120  # a guard against a hang, not a measure: the kill is what is asserted
    while (_alive(provisioner) or _alive(helper)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(provisioner) and not _alive(helper)
