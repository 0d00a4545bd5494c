"""The bundled example suite run once per test session through `stele-bench demo`, twice (the second run must
execute nothing): the real bundle the demo and publication tests read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


def demo(tmp: Path) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench", "--store", str(tmp / "store"), "--json", "demo"]
    command += ["--attempts", "1", "--published", str(tmp / "published")]
    env = {**os.environ, "STELE_BENCH_DOIT_DB": str(tmp / "doit.sqlite")}
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-4000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    result: dict[str, Any] = json.loads(lines[0])
    return result


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("demo")
    return tmp, demo(tmp), demo(tmp)
