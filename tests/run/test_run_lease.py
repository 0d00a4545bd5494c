"""The project's run lease: a second run waits for the first or, with --no-wait, is refused in one line naming the
holder; a killed holder's lease is taken over at once. The holder is a real process holding the real lease; two
real demos started together in one project run one after the other."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from subprocess import PIPE

import pytest
from demo_runs import DemoRuns

from bench.project import Project, init_project
from bench.run_lease import LEASE_FILE, RunLeaseHeld, run_lease
from bench.store import Store
from bench.store.actions import recorded_from

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

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


def test_two_demos_started_together_in_one_project_run_one_after_the_other(demo_runs: DemoRuns, tmp_path: Path) -> None:
    """Both started while this test holds the project's lease: each says it waits, naming this process; released,
    they run one at a time, each verified, leaving one result per key and no second version of the bundle."""
    project = Project(tmp_path / "project")
    shutil.copytree(demo_runs.project, project.root, ignore=shutil.ignore_patterns(".doit.sqlite*"))
    versions = (project.root / "published" / "example-versions" / "index.json").read_bytes()
    env = {name: value for name, value in os.environ.items() if not name.startswith("STELE_BENCH_")}
    command = [sys.executable, "-m", "bench", "--project", str(project.root), "--json", "demo", "--attempts", "1"]
    with run_lease(project, "the test", False, print):
        demos = [subprocess.Popen(command, stdout=PIPE, stderr=PIPE, text=True, env=env) for _ in range(2)]
        for demo in demos:
            assert demo.stderr is not None
            first = demo.stderr.readline()
            assert first.startswith(f"waiting for the run that holds this project: pid {os.getpid()} on "), first
    finished = [demo.communicate(timeout=1200) for demo in demos]
    for demo, (out, err) in zip(demos, finished, strict=True):
        assert demo.returncode == 0, err[-3000:]
        assert json.loads(out)["verified"] and json.loads(out)["executed_stages"] == 0
    keys = Counter(str(result.key) for result in recorded_from(Store(project.store), 0.0))
    assert keys and set(keys.values()) == {1}, "each key has one result"
    assert not (project.root / "published" / "example.new").exists()
    assert (project.root / "published" / "example-versions" / "index.json").read_bytes() == versions
