"""The bundled suite run locally, as `stele-bench demo` runs it: what the demo's test and the cluster's comparison
both start from (one run per session, see ``local_demo`` in conftest.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["run_demo"]

REPO = Path(__file__).resolve().parent.parent


def run_demo(tmp: Path) -> dict[str, Any]:
    """`stele-bench demo --attempts 1` into ``tmp`` (store, doit DB, published bundle); its one JSON result."""
    command = [sys.executable, "-m", "bench", "--store", str(tmp / "store"), "--json", "demo"]
    command += ["--attempts", "1", "--published", str(tmp / "published")]
    env = {**os.environ, "STELE_BENCH_DOIT_DB": str(tmp / "doit.sqlite")}
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-4000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    result: dict[str, Any] = json.loads(lines[0])
    return result
