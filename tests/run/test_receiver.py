"""The receiver's experience (issue 37): a third party with a copy of the demo's bundle and nothing else reads it
in a browser, opens it in Inspect, loads it in a notebook, and finds no path of the machine that made it.

Every test reads the bundle the session's demo run published (real containers, the real CLI), on a copy placed
where no project, store or doit database is.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from demo_runs import REPO, DemoRuns, bench_command

from bench.analysis import StatisticsSummary
from bench.interop import log_name
from bench.publish.bundle_layout import bundle_files
from bench.publish.effects import effects
from bench.publish.svg import TREATMENT_COLOUR
from bench.results import load_bundle
from bench.sandbox.layout import RUNNER_SCRATCH
from tests.publish.axe import audit
from tests.publish.png import colour_bands
from tests.publish.screen import first_screen

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

# The example's memory systems, in the order the pages show their arms (by name).
SYSTEMS = tuple(
    sorted(s["name"] for s in json.loads((REPO / "challenges/example/suite.json").read_text())["memory_systems"])
)
PAGE = "report/attempts/harbor-holds-1.html"


@pytest.fixture
def copy(demo_runs: DemoRuns, tmp_path: Path) -> Path:
    """The published bundle, copied where nothing of the project is."""
    place = tmp_path / "received" / "bundle"
    shutil.copytree(demo_runs.published, place)
    return place


def test_export_inspect_from_a_copied_bundle_alone_is_listed_and_served_by_inspect_view(
    copy: Path, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    done = bench_command(tmp_path, "--json", "export", "inspect", str(copy), "--log-dir", str(logs))
    assert done.returncode == 0, done.stdout + done.stderr  # no project, no store: the bundle is enough
    exported = json.loads(done.stdout)
    assert "store" not in exported and exported["samples"] == 4 * (1 + len(SYSTEMS))
    written = Path(exported["log"])
    assert written.parent == logs and re.match(
        r"^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\+00-00_example_\w+\.json$", written.name
    )
    log = json.loads(written.read_bytes())
    assert log["eval"]["task"] == "example" and written.name == log_name(log)  # the suite is the task
    with _Serving(logs) as api:
        (listed,) = api("log-files")["files"]  # Inspect lists only logs named as it names them
        assert listed["task"] == "example" and listed["name"].endswith(written.name)
        served = api(f"logs/{urllib.parse.quote(listed['name'], safe='')}")
        assert served["eval"]["task"] == "example" and len(served["samples"]) == exported["samples"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class _View:
    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}/api/"

    def __call__(self, path: str) -> Any:
        with urllib.request.urlopen(self.base + path, timeout=30) as answer:
            return json.loads(answer.read())


class _Serving:
    """`inspect view` on loopback, for as long as the ``with`` block; its own HTTP API answers the test."""

    def __init__(self, logs: Path) -> None:
        self.logs, self.port = logs, _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> _View:
        command = [sys.executable, "-m", "inspect_ai", "view", "--log-dir", str(self.logs), "--host", "127.0.0.1",
                   "--port", str(self.port)]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        view = _View(self.port)
        for _ in range(240):  # until the server answers (it imports Inspect first), or the process ends
            if self.process.poll() is not None:
                raise AssertionError(f"inspect view exited: {self.process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                view("log-dir")
                return view
            except OSError:
                time.sleep(0.5)
        raise AssertionError("inspect view did not answer on loopback")

    def __exit__(self, *_: object) -> None:
        assert self.process is not None
        self.process.terminate()
        self.process.communicate(timeout=30)  # waits, and closes the pipe


def test_load_bundle_reads_a_copied_bundle_with_no_store(copy: Path, demo_runs: DemoRuns) -> None:
    received = load_bundle(copy)
    assert received.records == load_bundle("published/example", demo_runs.store).records
    assert {system.condition.split(":")[0] for system in received.headline.systems} == set(SYSTEMS)
    assert len(received.rows()) == 2 * len(received.records)


def _host_paths(demo_runs: DemoRuns) -> dict[str, bytes]:
    """Every path of the machine that made the bundle that a file could name."""
    temp = tempfile.gettempdir()
    named = {
        "project": str(demo_runs.project),
        "checkout": str(REPO),
        "home": str(Path.home()),
        # The example's provisioners keep per-run state under the temp directory; so did the runner's staging.
        **{f"provisioner {name}": f"{temp}/{name}/" for name in ("recall", "kgraph", "notes")},
        **{f"runner scratch {prefix}": f"{temp}/{prefix}" for prefix in RUNNER_SCRATCH.values()},
    }
    return {what: path.encode() for what, path in named.items()}


def test_no_file_of_the_demo_bundle_names_a_host_path(demo_runs: DemoRuns) -> None:
    found = [
        f"{path}: {what}"
        for path, data in bundle_files(demo_runs.published).items()
        for what, host in _host_paths(demo_runs).items()
        if host in data or host in path.encode()
    ]
    assert found == []
    # What each arm mounted is named portably: a file the runner wrote, or a system's restored state by location.
    records = [data for path, data in bundle_files(demo_runs.published).items() if b'"kind":"arm-record"' in data]
    sources = {m["source"] for data in records for m in json.loads(data)["spec"]["attachment"]["mounts"]}
    assert sources and all(re.match(r"^(runner:[A-Za-z.-]+@[0-9a-f]{16}|restore:[a-z-]+/[a-z]+)$", s) for s in sources)
    assert {"restore:reference/state", "restore:server-memory/graph", "restore:static-notes/notes"} <= sources


def test_paths_inside_the_arms_containers_stay_as_the_harness_wrote_them(demo_runs: DemoRuns) -> None:
    """Evidence is never rewritten: every session file the CLI wrote still names the container's workspace and
    home, and hashes to the digest its arm record names (the bundle's objects are named by their digests)."""
    files = bundle_files(demo_runs.published)
    sessions = [
        files[f"objects/{json.loads(data)['session'].split(':')[1]}"]
        for data in files.values()
        if b'"kind":"arm-record"' in data and json.loads(data)["session"]
    ]
    assert len(sessions) == 4 * (1 + len(SYSTEMS))
    for session in sessions:
        assert b'"cwd":"/workspace"' in session


def _summary(demo_runs: DemoRuns) -> StatisticsSummary:
    return StatisticsSummary.model_validate_json(
        (demo_runs.published / "receipts/statistics-summary.json").read_bytes()
    )


@pytest.mark.parametrize(("width", "height"), [(1300, 900), (390, 844)])
def test_the_reports_first_screen_carries_each_systems_pooled_effect(
    copy: Path, demo_runs: DemoRuns, tmp_path: Path, width: int, height: int
) -> None:
    shown = effects(_summary(demo_runs))
    assert {effect.system.split("@")[0] for effect in shown} == set(SYSTEMS)
    marks = colour_bands(first_screen(copy / "report/index.html", width, height, tmp_path), _rgb(TREATMENT_COLOUR))
    assert len(marks) == len(shown), marks  # each comparison's effect and interval, above the fold
    answer = (copy / "report/index.html").read_text().split('<section id="outcomes"', 1)[0]
    for effect in shown:
        assert f"{effect.difference * 100:+.0f} points" in answer and f"<td>{effect.p_value:.3g}</td>" in answer


def _rgb(colour: str) -> tuple[int, int, int]:
    return (int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16))


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("width", [1300, 390])
@pytest.mark.parametrize("page", ["report/index.html", PAGE])
def test_the_report_and_an_attempt_page_have_no_serious_accessibility_violation(
    copy: Path, tmp_path: Path, page: str, width: int, dark: bool
) -> None:
    result = audit(copy / page, width, tmp_path, dark)
    serious = [v for v in result["violations"] if v["impact"] in ("serious", "critical")]
    assert serious == [], serious
    assert result["scrollWidth"] <= result["clientWidth"], result  # nothing runs off the side at 390 px


def test_an_attempt_page_says_what_each_arm_came_to_before_its_steps(copy: Path) -> None:
    html = (copy / PAGE).read_text()
    assert "<main>" in html and "<header>" in html and '<nav aria-label="report">' in html
    columns = dict(
        (column.split('"', 2)[1], column) for column in html.split('<section class="arm" data-condition=')[1:]
    )
    assert list(columns) == ["control", *SYSTEMS]
    for condition, column in columns.items():
        before_steps = column.split('<div class="step', 1)[0]
        assert re.search(r"<dt>outcome</dt><dd><strong>(pass|fail)</strong> \(finished", before_steps), condition
        assert "<dt>memory reached the model through</dt>" in before_steps
        admitted = [f"{system}: admitted" for system in (SYSTEMS if condition == "control" else (condition,))]
        assert all(text in before_steps for text in admitted), (condition, before_steps)
    assert "prompt-time-retrieval" in columns["reference"].split('<div class="step', 1)[0]
    assert "<dd>nothing</dd>" in columns["control"]  # memory reached the control's model through nothing
