"""Faults in the middle of a real run end it in one line with the family's exit code, and leave nothing behind
(issue 36, issue 32 build item 5).

Each test copies the session's demo project (tests/demo_runs.py: its first attempt is in the store) and asks for a
second attempt, so the run reaches a paired attempt within seconds; when an arm's agent starts (the note the run
prints) the fault is injected: a stop signal to the command or to its whole process group, a damaged index header,
the store unplugged, a full disk. The run must then exit with the family's code (143/130, 3, 8, 74), say so in one
line on stderr (one JSON object under --json, carrying the failed stage), print no traceback, and leave no container
or network of its own on the engine.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from demo_runs import REPO, DemoRuns, bench_command

pytestmark = pytest.mark.slow

STARTED = "arm: the agent is running"
_LISTED = '{{.ID}} {{.Label "sandbox.lease"}}'  # the note the run prints as an arm's agent starts


@dataclass(frozen=True)
class Stopped:
    code: int
    result: dict[str, object]
    stderr: str


def _copy(demo_runs: DemoRuns, into: Path) -> Path:
    project = into / "project"
    shutil.copytree(demo_runs.project, project, symlinks=True)
    return project


def _environment(leases: Path) -> dict[str, str]:
    named = ("STELE_BENCH_STORE", "STELE_BENCH_PROJECT", "STELE_BENCH_DOIT_DB")
    return {**{k: v for k, v in os.environ.items() if k not in named}, "SANDBOX_LEASE_DIR": str(leases)}


def _demo(project: Path, leases: Path, attempts: int) -> subprocess.Popen[str]:
    """`demo --attempts N --json` in ``project``, started as a terminal starts a command: in a group of its own."""
    command = [sys.executable, "-m", "bench", "--project", str(project), "--json", "demo", "--attempts", str(attempts)]
    return subprocess.Popen(
        command,
        cwd=REPO,
        env=_environment(leases),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _run_until_an_arm_starts(project: Path, leases: Path, fault: Callable[[subprocess.Popen[str]], None]) -> Stopped:
    """`demo --attempts 2 --json` in ``project``; ``fault`` is applied once an arm's agent runs."""
    seen: list[str] = []
    with _demo(project, leases, 2) as process:
        assert process.stderr is not None and process.stdout is not None
        for line in process.stderr:
            seen.append(line)
            if STARTED in line:
                fault(process)
                break
        else:
            pytest.fail("the run ended before an arm started:\n" + "".join(seen[-40:]))
        rest, out = process.stderr.read(), process.stdout.read()
        code = process.wait(timeout=600)
    lines = out.splitlines()
    if code == -signal.SIGKILL:  # killed outright: it could print nothing
        return Stopped(code, {}, "".join(seen) + rest)
    assert len(lines) == 1, out  # one JSON object, refusal or not
    return Stopped(code, json.loads(lines[0]), "".join(seen) + rest)


def _left_behind(leases: Path) -> list[str]:
    """Containers and networks on the engine whose lease lies in ``leases``: this run's."""
    found = []
    for kind in ("ps -a", "network ls"):
        listed = subprocess.run(
            [
                "docker",
                *kind.split(),
                "--filter",
                "label=sandbox.lease",
                "--format",
                '{{.ID}} {{.Label "sandbox.lease"}}',
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        found += [line for line in listed.splitlines() if str(leases) in line]
    return found


def _one_line_no_traceback(stopped: Stopped) -> str:
    assert "Traceback" not in stopped.stderr, stopped.stderr[-4000:]
    said = [line for line in stopped.stderr.splitlines() if line.startswith("stele-bench: ")]
    assert len(said) == 1, stopped.stderr[-4000:]
    return said[0]


@pytest.mark.parametrize(
    ("signum", "group"),
    [(signal.SIGTERM, False), (signal.SIGINT, True), (signal.SIGHUP, False)],
    ids=["SIGTERM to the command", "SIGINT to its process group (Ctrl-C)", "SIGHUP to the command"],
)
def test_a_stop_signal_mid_attempt_ends_the_demo_in_one_line_and_leaves_nothing(
    demo_runs: DemoRuns, tmp_path: Path, signum: signal.Signals, group: bool
) -> None:
    leases = tmp_path / "leases"

    def stop(process: subprocess.Popen[str]) -> None:
        if group:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)

    stopped = _run_until_an_arm_starts(_copy(demo_runs, tmp_path), leases, stop)
    assert stopped.code == 128 + signum, stopped.stderr[-4000:]
    assert _one_line_no_traceback(stopped) == f"stele-bench: interrupted by {signum.name}"
    assert stopped.result["error"] == {
        "code": "interrupted",
        "type": "Interrupted",
        "message": f"interrupted by {signum.name}",
        "signal": signum.name,
        "exit_code": 128 + signum,
    }
    assert _left_behind(leases) == []  # every container and network of the run went before it exited
    assert not list(leases.glob("*.json"))  # and its leases with them


def _damage_header(project: Path) -> Callable[[subprocess.Popen[str]], None]:
    def damage(process: subprocess.Popen[str]) -> None:
        with (project / "store" / "index.sqlite").open("r+b") as index:
            index.write(b"this is no database header" * 4)

    return damage


def _unplug(project: Path) -> Callable[[subprocess.Popen[str]], None]:
    def unplug(process: subprocess.Popen[str]) -> None:  # as a store on a disk that went away
        (project / "store").rename(project / "store-unplugged")

    return unplug


@pytest.mark.parametrize(
    ("fault", "code", "error"),
    [(_damage_header, 3, "store-corrupt"), (_unplug, 8, "store")],
    ids=["a damaged index header", "the store unplugged"],
)
def test_a_store_fault_mid_attempt_exits_with_the_stores_code_naming_the_store(
    demo_runs: DemoRuns,
    tmp_path: Path,
    fault: Callable[[Path], Callable[[subprocess.Popen[str]], None]],
    code: int,
    error: str,
) -> None:
    leases = tmp_path / "leases"
    project = _copy(demo_runs, tmp_path)
    stopped = _run_until_an_arm_starts(project, leases, fault(project))
    line = _one_line_no_traceback(stopped)
    assert stopped.code == code, stopped.stderr[-4000:]
    failed = stopped.result["error"]
    assert isinstance(failed, dict) and failed["code"] == error and failed["exit_code"] == code, failed
    assert failed["stage"] == "paired-attempt" and failed["task"], failed  # the stage it stopped in
    assert str(project / "store") in line and "FAILED" not in line  # names the store, not a line elsewhere
    assert _left_behind(leases) == []


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of its own (the tests run as root, as setup does), unmounted after. Room for the copied demo project
    and what a run writes before the fault (the demo's store grows with every memory system the example declares:
    160 MiB ran out before the fault on a busy machine); the fault then fills the rest."""
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=640m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def _fill(disk: Path) -> Callable[[subprocess.Popen[str]], None]:
    def fill(process: subprocess.Popen[str]) -> None:
        used = shutil.disk_usage(disk).used
        assert shutil.disk_usage(disk).free > 32 << 20, f"the disk was nearly full before the fault ({used} bytes)"
        with (disk / "filler").open("wb") as filler:
            try:
                while True:
                    filler.write(b"\0" * (1 << 20))
                    filler.flush()
            except OSError:  # ENOSPC: the disk is full
                pass

    return fill


def test_a_full_disk_mid_attempt_exits_74_naming_the_file_being_written(
    demo_runs: DemoRuns, tmp_path: Path, small_disk: Path
) -> None:
    leases = tmp_path / "leases"
    project = _copy(demo_runs, small_disk)
    stopped = _run_until_an_arm_starts(project, leases, _fill(small_disk))
    line = _one_line_no_traceback(stopped)
    assert stopped.code == 74, stopped.stderr[-4000:]
    failed = stopped.result["error"]
    assert isinstance(failed, dict) and failed["code"] == "system-refused", failed
    written = Path(str(failed["path"]))
    assert written.is_relative_to(small_disk) and written != project / "store", failed  # the file, not the store
    assert str(written) in line and "No space left on device" in line
    assert _left_behind(leases) == []


def _running(project: Path) -> list[int]:
    """Processes whose command line names ``project``: the command and its pipeline (in a session of its own)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            named = entry.name.isdigit() and str(project).encode() in (entry / "cmdline").read_bytes()
        except OSError:  # it ended while listed
            continue
        if named and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


def _gone(group: int, project: Path) -> None:
    """Wait for every process of ``group`` and of the run to end (the pipeline outlives its command by its
    cleanup, in a session of its own)."""
    for _ in range(1200):
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            if not _running(project):
                return
        time.sleep(0.25)
    pytest.fail(f"processes of the run in {project} still run five minutes after the command was killed")


def _sigkill(group: bool, project: Path) -> Callable[[subprocess.Popen[str]], None]:
    """SIGKILL to the command (or its group, and then to the pipeline's own session too: everything, outright)."""

    def kill(process: subprocess.Popen[str]) -> None:
        pipeline = _pipeline_of(process.pid)
        if group:
            os.killpg(process.pid, signal.SIGKILL)
            if pipeline is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pipeline, signal.SIGKILL)
        else:
            process.kill()
        process.wait()  # reaped, so only the pipeline's processes can keep the run alive
        _gone(process.pid, project)

    return kill


def test_a_command_killed_outright_stops_its_pipeline_which_cleans_up(demo_runs: DemoRuns, tmp_path: Path) -> None:
    leases = tmp_path / "leases"
    project = _copy(demo_runs, tmp_path)
    stopped = _run_until_an_arm_starts(project, leases, _sigkill(group=False, project=project))
    assert stopped.code == -signal.SIGKILL
    assert "Traceback" not in stopped.stderr, stopped.stderr[-4000:]
    assert _left_behind(leases) == []  # the pipeline got SIGTERM as its command died, and took its arms with it


def test_the_next_run_sweeps_what_a_killed_run_left(demo_runs: DemoRuns, tmp_path: Path) -> None:
    leases = tmp_path / "leases"
    project = _copy(demo_runs, tmp_path)

    def kill_once_it_holds_something(process: subprocess.Popen[str]) -> None:
        for _ in range(600):  # the arm's networks and containers appear as it starts
            if _left_behind(leases):
                break
            time.sleep(0.2)
        _sigkill(group=True, project=project)(process)  # the command and its pipeline: nothing can clean up

    stopped = _run_until_an_arm_starts(project, leases, kill_once_it_holds_something)
    assert stopped.code == -signal.SIGKILL  # what it held stays on the engine (unless another run swept it first)
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--project", str(project), "demo", "--attempts", "1"],
        cwd=REPO,
        env=_environment(leases),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert _left_behind(leases) == []  # swept before the run started: their lease died with their runner


def _pipeline_of(command: int) -> int | None:
    """The pid of the pipeline process ``command`` started (``python -m bench.run.dodo``), once it exists."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # it ended while listed
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == command and b"bench.run.dodo" in argv:
            return int(entry.name)
    return None


def test_ctrl_c_while_the_pipeline_starts_reaches_the_command_alone_and_prints_no_traceback(tmp_path: Path) -> None:
    """Ctrl-C the moment the pipeline process exists (its interpreter still starting): found by the soak, which saw
    the pipeline's start-up traceback ("Fatal Python error: init_import_site") when the group got SIGINT then."""
    leases = tmp_path / "leases"
    project = tmp_path / "project"
    assert bench_command(REPO, "init", str(project)).returncode == 0
    with _demo(project, leases, 1) as process:
        pipeline = None
        while pipeline is None and process.poll() is None:
            pipeline = _pipeline_of(process.pid)
        own_group = pipeline is not None and os.getpgid(pipeline) != process.pid
        if process.poll() is None:  # before any assertion: a failing one must not wait out the run
            os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=600)
    assert pipeline is not None, "the demo ended before it started its pipeline:\n" + err[-4000:]
    stopped = Stopped(process.returncode, json.loads(out), err)
    assert "Fatal Python error" not in err, err[-4000:]
    assert _one_line_no_traceback(stopped) == "stele-bench: interrupted by SIGINT"
    assert stopped.code == 130, err[-4000:]
    assert own_group  # the pipeline is not in the group a terminal's Ctrl-C reaches: its command stops it
    assert _left_behind(leases) == []
