"""No-op rerun of a 1,000-task plan against `doit list` on the same dodo (both load the plan the same way).

The gap between them is what deciding "up to date" costs: one action-cache lookup per task.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "doit", *args], cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="noop-bench-"))
    try:
        names = []
        for index in range(500):
            directory = work / "inputs" / f"d{index:03}"
            directory.mkdir(parents=True)
            (directory / "file.txt").write_text(f"content {index}\n")
            names.append(directory.name)
        spec = work / "plan.json"
        spec.write_text(
            json.dumps({"builder": "directory-summaries", "base": str(work / "inputs"), "args": {"directories": names}})
        )
        env = {**os.environ, "STELE_BENCH_DOIT_DB": str(work / "doit.sqlite")}
        variables = [f"plan={spec}", f"store={work / 'store'}"]
        first = run(variables, env)
        noop = min(run(variables, env) for _ in range(3))
        listing = min(run(["list", *variables], env) for _ in range(3))
        print("plan: 1,000 tasks (500 directory trees + 500 summaries)")
        print(f"first run             {first:6.2f} s")
        print(f"no-op rerun           {noop:6.2f} s")
        print(f"doit list             {listing:6.2f} s   ratio no-op/list = {noop / listing:5.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
