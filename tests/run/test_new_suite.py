"""A user's own suite (issue 13, build item 4): `new suite` scaffolds one in a project, its template provisioner
passes `stele-bench provision` by hand, `run` refuses it in one line while the verifier and oracle are templates,
and once they are written, pinned and frozen, `run` takes it through the pipeline in containers with progress on
stderr, the summary and the report's path, and verifies the publication."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from demo_runs import REPO, bench_command

from bench.suite.suite import open_suite

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

EXAMPLE = REPO / "challenges" / "example"
VERIFIER = """import pathlib
import sys

answer = pathlib.Path("ANSWER.md")
sys.exit(0 if answer.is_file() and "ledger" in answer.read_text().lower() else 1)
"""
ORACLE = """import pathlib

pathlib.Path("ANSWER.md").write_text("The ledger is kept in tallybook.\\n")
"""


def _json(cwd: Path, *argv: str, timeout: float = 300) -> tuple[int, dict[str, Any], str]:
    done = bench_command(cwd, "--json", *argv, timeout=timeout)
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout + done.stderr[-3000:]
    return done.returncode, json.loads(lines[0]), done.stderr


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("own") / "project"
    assert bench_command(REPO, "init", str(project)).returncode == 0
    commit = json.loads((EXAMPLE / "suite.json").read_text())["project"]["commit"]
    bundle = str(EXAMPLE / "project.bundle")
    code, made, err = _json(project, "new", "suite", "suites/mine", "--repo", bundle, "--commit", commit)
    assert code == 0 and made["suite"] == "suites/mine", err
    return project.resolve()


def test_new_suite_writes_a_skeleton_that_reads_as_a_suite_with_its_project_pinned(scaffolded: Path) -> None:
    suite = open_suite(scaffolded / "suites" / "mine")
    assert (
        suite.manifest.suite_id == "mine"
        and suite.manifest.project.commit == json.loads((EXAMPLE / "suite.json").read_text())["project"]["commit"]
    )
    assert [system.name for system in suite.manifest.memory_systems] == ["template"]
    for name in ("README.md", "provisioner.py", "first-challenge/verify.py", "first-challenge/oracle.py"):
        assert (scaffolded / "suites" / "mine" / name).is_file(), name


def test_the_template_provisioner_passes_provision_by_hand(scaffolded: Path, tmp_path: Path) -> None:
    common = ["--fixture-root", "suites/mine/fixture"]
    provisioner = ["--provisioner", f"suites/mine/provisioner.py --home {tmp_path / 'home'}"]
    code, restored, err = _json(
        scaffolded, "provision", "restore", *provisioner, *common, "--graph-arm", "notes", "--run-identity", "hand-1"
    )
    assert code == 0, err
    project = restored["response"]["project"]
    assert Path(restored["response"]["locations"]["paths"]["notes"]).read_text().strip()
    code, snap, err = _json(scaffolded, "provision", "snapshot", *provisioner, *common, "--memory-project", project)
    assert code == 0, err
    assert snap["response"]["state"]["present"] and snap["response"]["probes"][0]["status"] == "answered"
    code, _, err = _json(scaffolded, "provision", "destroy", *provisioner, *common, "--memory-project", project)
    assert code == 0 and not (tmp_path / "home" / project).exists(), err


def test_run_refuses_the_fresh_scaffold_in_one_line_naming_the_template_files(scaffolded: Path) -> None:
    code, refused, err = _json(scaffolded, "run", "suites/mine")
    assert (code, refused["error"]["code"]) == (6, "contract")
    message = refused["error"]["message"]
    assert "first-challenge/verify.py" in message and "first-challenge/oracle.py" in message
    assert "stele-bench pin suites/mine" in refused["error"]["hint"] and err.count("\n") == 1
    assert not (scaffolded / "store").exists()  # refused before anything started


def test_once_written_pinned_and_frozen_the_suite_runs_end_to_end_and_verifies(scaffolded: Path) -> None:
    challenge = scaffolded / "suites" / "mine" / "first-challenge"
    (challenge / "verify.py").write_text(VERIFIER)
    (challenge / "oracle.py").write_text(ORACLE)
    code, pinned, err = _json(scaffolded, "pin", "suites/mine")
    assert code == 0 and pinned["written"], err
    code, _, err = _json(scaffolded, "prereg", "freeze", "suites/mine")
    assert code == 0, err
    code, ran, progress = _json(scaffolded / "suites", "run", "mine", "--attempts", "1", timeout=1200)
    assert code == 0, progress[-4000:]
    assert ran["verified"] and ran["suite"] == "mine" and ran["store"] == str(scaffolded / "store")
    assert ran["report"] == str(scaffolded / "published" / "mine" / "report" / "index.html")
    assert Path(ran["report"]).is_file()
    assert re.search(r"^\[ *\d+/\d+\] calibrate first-challenge .* done -> calibrated", progress, re.M)
    assert re.search(r"^\[ *\d+/\d+\] paired-attempt first-challenge #1 ", progress, re.M)
    assert ran["headline"], ran


def test_status_says_what_is_stale_and_why_without_running_anything(scaffolded: Path) -> None:
    code, current, err = _json(scaffolded, "status", "suites/mine", "--attempts", "1")
    assert code == 0, err
    assert (current["counts"]["stale"], current["counts"]["waiting"]) == (0, 0) and current["counts"]["up to date"]
    assert current["invocations"] == []  # only the stale are listed without --all
    code, more, err = _json(scaffolded, "status", "suites/mine", "--attempts", "2")
    (stale,) = more["invocations"]  # the second attempt of the one challenge, and why: what differs from the first
    assert (stale["stage"], stale["labels"]["attempt"]) == ("paired-attempt", "2")
    assert stale["reasons"] == ["param attempt: 1 -> 2"]
    assert more["counts"]["waiting"] > 0  # its grades, records, the bundle and publication wait on it
    assert not (scaffolded / "suites" / "mine" / "store").exists()
