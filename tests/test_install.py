"""A newcomer's install (issue 37, item 1): a fresh virtual environment, the package with its test extra from the
index, its console script. Most users install into a venv (or with uv or pipx), not into the system interpreter
scripts/setup.sh uses, and an open-ended range once made pip backtrack there for 15 minutes without resolving."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench import __version__

REPO = Path(__file__).resolve().parent.parent
# What pip prints when it backtracks, the cause of the 15-minute resolutions: with bounded, consistent ranges it never
# has to. Resolving took 26 s here on a quiet machine and 107 s at a load of 11 on two cores (the bound is two
# minutes), so the test holds the behaviour, not a wall time; the timeout only stops a regression from running on.
BACKTRACKING = "is looking at multiple versions of"
RESOLVE_TIMEOUT = 600
# What a checkout holds that a build must not read: the project's own store, runs and caches (the top-level store/
# only: bench/store is the package's).
_TOP_LEVEL = {"store", "published", "logs", "build", ".git", ".doit.sqlite"}
_ANYWHERE = shutil.ignore_patterns("__pycache__", "*.egg-info", ".*_cache", ".hypothesis", "*-versions")


def _left_out(directory: str, names: list[str]) -> set[str]:
    top = {name for name in names if name in _TOP_LEVEL} if Path(directory) == REPO else set()
    return top | set(_ANYWHERE(directory, names))


def _run(argv: list[str], timeout: float, cwd: Path) -> subprocess.CompletedProcess[str]:
    # Nothing of this checkout on the path: the venv's own install must answer.
    env = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.slow
def test_a_fresh_venv_resolves_the_test_extra_without_backtracking_installs_it_and_runs_stele_bench(
    tmp_path: Path,
) -> None:
    source = tmp_path / "stele-bench"
    shutil.copytree(REPO, source, ignore=_left_out, symlinks=True)
    venv = tmp_path / "venv"
    made = _run([sys.executable, "-m", "venv", str(venv)], 120, tmp_path)
    assert made.returncode == 0, made.stderr
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
    resolved = _run([*pip, "install", "--dry-run", f"{source}[test]"], RESOLVE_TIMEOUT, tmp_path)
    assert resolved.returncode == 0, resolved.stderr[-3000:]
    said = resolved.stdout + resolved.stderr
    assert BACKTRACKING not in said, [line for line in said.splitlines() if BACKTRACKING in line]
    installed = _run([*pip, "install", "--quiet", f"{source}[test]"], 1200, tmp_path)
    assert installed.returncode == 0, installed.stderr[-3000:]
    version = _run([str(venv / "bin" / "stele-bench"), "--version"], 60, tmp_path)
    assert version.returncode == 0, version.stderr
    assert __version__ in version.stdout
    where = _run([str(venv / "bin" / "python"), "-c", "import bench; print(bench.__file__)"], 60, tmp_path)
    assert where.stdout.startswith(str(venv)), where.stdout  # the venv's copy, not this checkout
