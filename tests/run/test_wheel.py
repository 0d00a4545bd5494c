"""The wheel (issue 21, build item 6): built from the tree, installed into a fresh virtual environment that sees
nothing of this checkout, it carries the example and its plans, installs no stray top-level package, and its
`stele-bench demo` runs: against the project the checkout's demo made it executes no stage (the packed example is
the same bytes, so the same action keys) and verifies the publication."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from demo_runs import REPO, DemoRuns

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

EXAMPLE = ("challenges/example", "manifests/example", "manifests/plans")


def _clean_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "STELE_BENCH_", "VIRTUAL_ENV"))}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the tracked files, so that the build leaves nothing in the checkout."""
    base = tmp_path_factory.mktemp("wheel")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source, target = REPO / name, base / "src" / name
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(base / "dist"), str(base / "src")]
    subprocess.run(command, check=True, capture_output=True, timeout=600)
    (built,) = (base / "dist").glob("stele_bench-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel and its dependencies from the package index, nothing else."""
    root = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=300)
    install = [str(root / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)]
    # Without PYTHONPATH: a checkout on it (its stele_bench.egg-info) would make pip think the package installed.
    subprocess.run(install, check=True, capture_output=True, timeout=900, env=_clean_environment())
    return root


def _outside(venv: Path, cwd: Path, *argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """A command of the installed tool, from a shell that never heard of this checkout (no PYTHONPATH)."""
    env = _clean_environment()
    return subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_wheel_holds_only_bench_the_licence_and_the_example_byte_for_byte(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        tops = {name.split("/", 1)[0] for name in names}
        assert tops == {"bench", wheel.name.split("-py3")[0] + ".dist-info"}  # no `benchmarks`, no `tests`
        info = next(top for top in tops if top.endswith(".dist-info"))
        assert f"{info}/licenses/LICENSE" in names
        assert "License-Expression: MIT" in archive.read(f"{info}/METADATA").decode()
        for directory in EXAMPLE:
            for path in (REPO / directory).rglob("*"):
                if path.is_file() and "__pycache__" not in path.parts:
                    member = archive.getinfo(f"bench/_example/{path.relative_to(REPO).as_posix()}")
                    assert archive.read(member) == path.read_bytes(), path
                    mode = member.external_attr >> 16
                    assert bool(mode & 0o100) == os.access(path, os.X_OK), path  # the provisioner stays executable


def test_the_installed_tool_answers_version_and_help_from_anywhere(venv: Path, tmp_path: Path) -> None:
    version = _outside(venv, tmp_path, str(venv / "bin" / "stele-bench"), "--version")
    assert version.returncode == 0 and version.stdout.startswith("stele-bench ")
    helped = _outside(venv, tmp_path, str(venv / "bin" / "python"), "-m", "bench", "--help")
    assert helped.returncode == 0 and "exit codes:" in helped.stdout
    where = _outside(venv, tmp_path, str(venv / "bin" / "python"), "-c", "import bench; print(bench.__file__)")
    assert where.stdout.startswith(str(venv))  # the installed copy, not the checkout


def test_the_installed_demo_runs_against_the_checkouts_project_and_reruns_nothing(
    venv: Path, demo_runs: DemoRuns, tmp_path: Path
) -> None:
    command = [str(venv / "bin" / "stele-bench"), "--json", "--project", str(demo_runs.project), "demo"]
    done = _outside(venv, tmp_path, *command, "--attempts", "1", timeout=1200)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout)
    assert result["verified"] and result["executed_stages"] == 0, result
    assert result["store"] == str(demo_runs.store)
