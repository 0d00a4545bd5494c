"""No-op rerun of a 1,000-task plan against `doit list` on the same dodo (both load the plan the same way).

The gap between them is what deciding "up to date" costs: one action-cache lookup per task. Measured on a store
directory, and on an S3 store (SeaweedFS on loopback, from tests/s3server.py) with the local cache in front and
without it (`STELE_BENCH_STORE_CACHE=off`): the peer of the S3 figures is the store directory's.
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
sys.path.insert(0, str(REPO / "tests"))

from s3server import seaweed  # noqa: E402


def run(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "doit", *args], cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def plan(work: Path, directories: int) -> Path:
    names = []
    for index in range(directories):
        directory = work / "inputs" / f"d{index:03}"
        directory.mkdir(parents=True)
        (directory / "file.txt").write_text(f"content {index}\n")
        names.append(directory.name)
    spec = work / "plan.json"
    spec.write_text(
        json.dumps({"builder": "directory-summaries", "base": str(work / "inputs"), "args": {"directories": names}})
    )
    return spec


def fresh_rerun(name: str, store: str, spec: Path, env: dict[str, str], work: Path) -> float:
    """The best of three no-op reruns, each with a fresh doit DB (so every task asks the store)."""
    variables = [f"plan={spec}", f"store={store}"]
    return min(run(variables, {**env, "STELE_BENCH_DOIT_DB": str(work / f"{name}-{i}.sqlite")}) for i in range(3))


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="noop-bench-"))
    try:
        spec = plan(work, 500)
        env = {**os.environ, "STELE_BENCH_DOIT_DB": str(work / "doit.sqlite")}
        variables = [f"plan={spec}", f"store={work / 'store'}"]
        first = run(variables, env)
        noop = min(run(variables, env) for _ in range(3))
        listing = min(run(["list", *variables], env) for _ in range(3))
        print("plan: 1,000 tasks (500 directory trees + 500 summaries)")
        print(f"first run             {first:6.2f} s")
        print(f"no-op rerun           {noop:6.2f} s")
        print(f"doit list             {listing:6.2f} s   ratio no-op/list = {noop / listing:5.2f}x")
        # Without doit's DB every task asks the action cache: the lookup the cluster's head makes on a rerun.
        local = fresh_rerun("local", str(work / "store"), spec, env, work)
        with seaweed() as server:
            bucket = server.location("noop")
            cached_env = {**env, **server.environment, "STELE_BENCH_STORE_CACHE": str(work / "cache")}
            s3_first = run([f"plan={spec}", f"store={bucket}"], {**cached_env, "STELE_BENCH_DOIT_DB": str(work / "s3")})
            cached = fresh_rerun("cached", bucket, spec, cached_env, work)
            uncached = fresh_rerun("uncached", bucket, spec, {**cached_env, "STELE_BENCH_STORE_CACHE": "off"}, work)
        print("no-op rerun with a fresh doit DB (every task asks the store's action cache):")
        print(f"  store directory       {local:6.2f} s")
        print(f"  S3, first run         {s3_first:6.2f} s")
        print(f"  S3 with local cache   {cached:6.2f} s   ratio to the directory = {cached / local:5.2f}x")
        print(f"  S3 without the cache  {uncached:6.2f} s   ratio to the directory = {uncached / local:5.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
