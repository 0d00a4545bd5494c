"""The project's run lease: a second run waits for the first or, with --no-wait, is refused in one line naming the
holder; a killed holder's lease is taken over at once. The holder is a real process holding the real lease."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.project import Project, init_project
from bench.run_lease import LEASE_FILE, RunLeaseHeld, run_lease

REPO = Path(__file__).resolve().parents[2]
HOLD = """
import sys
from pathlib import Path
from bench.project import Project
from bench.run_lease import run_lease
with run_lease(Project(Path(sys.argv[1])), "stele-bench demo", True, print):
    print("held", flush=True)
    sys.stdin.read()  # until the test closes it
"""


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return init_project(tmp_path / "project")[0]


@pytest.fixture
def holder(project: Project) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the project's lease until its stdin closes."""
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(REPO))}
    command = [sys.executable, "-c", HOLD, str(project.root)]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env) as process:
        assert process.stdout is not None and process.stdout.readline() == "held\n"
        yield process
        if process.poll() is None:
            process.kill()


def test_a_second_run_is_refused_naming_the_holder(project: Project, holder: subprocess.Popen[str]) -> None:
    with pytest.raises(RunLeaseHeld) as refused, run_lease(project, "stele-bench run", False, print):
        pytest.fail("the lease was taken twice")
    assert refused.value.holder is not None and refused.value.holder["pid"] == holder.pid
    assert f"another run holds this project: pid {holder.pid} on " in str(refused.value)
    assert "`stele-bench demo`" in str(refused.value) and "\n" not in str(refused.value)


def test_a_second_run_waits_then_holds(project: Project, holder: subprocess.Popen[str]) -> None:
    said: list[str] = []
    held = threading.Event()

    def second() -> None:
        with run_lease(project, "stele-bench run", True, said.append):
            held.set()

    waiting = threading.Thread(target=second)
    waiting.start()
    while not said:  # it says whom it waits for before it blocks
        threading.Event().wait(0.02)
    assert not held.is_set()
    assert said == [f"waiting for the run that holds this project: pid {holder.pid} on {said[0].split(' on ')[1]}"]
    assert holder.stdin is not None
    holder.stdin.close()  # the first run ends
    waiting.join()
    assert held.is_set()


def test_a_killed_holders_lease_is_taken_over(project: Project, holder: subprocess.Popen[str]) -> None:
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert str(holder.pid) in (project.root / LEASE_FILE).read_text(), "its file still names it"
    with run_lease(project, "stele-bench run", False, print) as mine:
        assert mine.pid == os.getpid()
        assert json.loads((project.root / LEASE_FILE).read_text())["pid"] == os.getpid()
    assert (project.root / LEASE_FILE).read_text() == "", "a lease nobody holds names nobody"


def test_the_command_line_refuses_in_one_line_and_one_object(project: Project, holder: subprocess.Popen[str]) -> None:
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(REPO))}
    command = [sys.executable, "-m", "bench", "--project", str(project.root), "--json", "demo", "--no-wait"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 8, done.stderr
    assert done.stderr.count("\n") == 1 and f"pid {holder.pid}" in done.stderr
    (line,) = done.stdout.splitlines()
    error = json.loads(line)["error"]
    assert error["code"] == "run-lease-held" and error["holder"]["pid"] == holder.pid
