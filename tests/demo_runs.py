"""The demo as a user runs it, once per session (the ``demo_runs`` fixture of tests/conftest.py), shared by the
tests that read what it produced: the demo's own and the cluster's comparison (tests/scale).

The project is made with `init` in a temporary directory. The first run names it with `--project` from the
repository (outside the project); the second runs from a subdirectory of the project with no option and no
environment naming a store, project or doit database, so it finds the project as git finds a repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = ["REPO", "DemoRun", "DemoRuns", "bench_command", "demo", "run_demo_twice"]

REPO = Path(__file__).resolve().parent.parent
_NAMED = ("STELE_BENCH_STORE", "STELE_BENCH_PROJECT", "STELE_BENCH_DOIT_DB")


@dataclass(frozen=True)
class DemoRun:
    result: dict[str, Any]
    progress: str  # what the pipeline printed on stderr


@dataclass(frozen=True)
class DemoRuns:
    project: Path
    first: DemoRun
    second: DemoRun

    @property
    def published(self) -> Path:
        return self.project / "published" / "example"

    @property
    def store(self) -> Path:
        return self.project / "store"


def bench_command(cwd: Path, *argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`python -m bench ARGV` from ``cwd``, with nothing in the environment naming a store or project."""
    env = {name: value for name, value in os.environ.items() if name not in _NAMED}
    command = [sys.executable, "-m", "bench", *argv]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def demo(cwd: Path, *options: str) -> DemoRun:
    done = bench_command(cwd, *options, "--json", "demo", "--attempts", "1", timeout=1200)
    assert done.returncode == 0, done.stderr[-4000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout  # progress goes to stderr; stdout is the one result object
    return DemoRun(json.loads(lines[0]), done.stderr)


def run_demo_twice(tmp_path_factory: pytest.TempPathFactory) -> DemoRuns:
    project = tmp_path_factory.mktemp("demo") / "project"
    made = bench_command(REPO, "init", str(project))
    assert made.returncode == 0, made.stderr
    first = demo(REPO, "--project", str(project))
    second = demo(project / "suites")
    return DemoRuns(project.resolve(), first, second)
