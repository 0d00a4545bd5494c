"""No-op rerun of a 1,000-task plan over an S3 store, with and without the local cache, against a store directory.

Each rerun starts with a fresh doit DB, so every task asks the store's action cache: the lookup a cluster's head
makes on a rerun. The S3 store is SeaweedFS on loopback (tests/s3server.py); the local cache in front of it is on
unless ``STELE_BENCH_STORE_CACHE=off``. The peer of both S3 figures is the same rerun over a store directory.
Usage: python3 benchmarks/s3_rerun.py [--repeat N]
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from s3server import seaweed

from benchmarks.harness import REPO, Sample, compare, print_comparison, run_measured
from benchmarks.noop_rerun import directory_plan

GOAL_CACHED = 1.5  # the cache keeps a rerun near a local one
GOAL_UNCACHED = 10.0  # without it each lookup is a loopback HTTP request


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="s3-rerun-bench-"))
    fresh = itertools.count()
    try:
        spec = directory_plan(work, 1_000)
        env = {**os.environ, "PYTHONPATH": str(REPO)}

        def rerun(store: str, extra: dict[str, str]) -> Sample:
            db = {"STELE_BENCH_DOIT_DB": str(work / f"doit-{next(fresh)}.sqlite")}
            command = [sys.executable, "-m", "doit", f"plan={spec}", f"store={store}"]
            return Sample(*run_measured(command, cwd=REPO, env={**env, **extra, **db})[:2])

        local = str(work / "store")
        first = rerun(local, {})
        print(f"plan: 1,000 tasks; first run over a store directory {first.seconds:.2f} s")
        with seaweed() as server:
            bucket = server.location("noop")
            cached = {**server.environment, "STELE_BENCH_STORE_CACHE": str(work / "cache")}
            uncached = {**server.environment, "STELE_BENCH_STORE_CACHE": "off"}
            print(f"first run over S3 {rerun(bucket, cached).seconds:.2f} s")
            with_cache = compare(args.repeat, lambda _: rerun(bucket, cached), lambda _: rerun(local, {}))
            print_comparison("no-op rerun, S3 with the local cache", "store directory", with_cache, GOAL_CACHED)
            without = compare(args.repeat, lambda _: rerun(bucket, uncached), lambda _: rerun(local, {}))
            print_comparison("no-op rerun, S3 without the cache", "store directory", without, GOAL_UNCACHED)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
