"""The seam holds: only the Docker backend's package imports the Docker SDK (or requests, its transport)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

ROOT = Path(__file__).resolve().parents[2]
DOCKER_PACKAGE = ROOT / "bench" / "sandbox" / "backends" / "docker"
ENGINE_LIBRARIES = {"docker", "requests"}


def _imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_only_the_docker_backend_imports_the_engine_libraries() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(found)
        for path in sorted((ROOT / "bench").rglob("*.py"))
        if DOCKER_PACKAGE not in path.parents and (found := _imported_roots(path) & ENGINE_LIBRARIES)
    }
    assert offenders == {}
    assert _imported_roots(DOCKER_PACKAGE / "engine.py") >= ENGINE_LIBRARIES  # the check can fail


def test_the_runner_steps_load_without_the_docker_sdk() -> None:
    probe = (
        "import sys, bench.sandbox, bench.agent, bench.sandbox.backends.process\n"
        "print(sorted(name for name in ('docker', 'requests') if name in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"
