"""The whole demo: `python3 -m bench demo` from a fresh store (images already built), then the no-op rerun of
its plan against `doit list` on the same plan (goal <= 1.2x: deciding that nothing needs to run costs little
more than listing the tasks).

The first run is the real pipeline (the real Claude Code CLI in containers against the gateway), so it is timed
once and has no peer; it prints the time and the peak memory of the demo process. The rerun and `doit list` both
load the same dodo.py and plan over the same store, alternating, medians compared. The demo cannot run at 4x (its
preregistration caps the attempts), so the growth of the no-op rerun with the plan's size is measured by
benchmarks/noop_rerun.py, at 1,000 and 4,000 tasks.
Usage: python3 benchmarks/demo.py [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import REPO, Sample, compare, pipeline_env, print_comparison, run_measured

GOAL = 1.2
PLAN = "manifests/plans/example.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="demo-bench-"))
    env = pipeline_env(work, STELE_BENCH_DOIT_DB=str(work / "doit.sqlite"))
    store = work / "store"
    demo = [sys.executable, "-m", "bench", "--store", str(store), "demo", "--published", str(work / "published")]
    seconds, peak, output = run_measured(demo, cwd=REPO, env=env)
    print(output.strip().splitlines()[-1] if output.strip() else "(no output)")
    print(f"demo from a fresh store: {seconds:.1f} s, {peak:.0f} MB peak (the demo process)")

    doit = [sys.executable, "-m", "doit"]
    variables = [f"plan={PLAN}", f"store={store}"]
    comparison = compare(
        args.repeat,
        lambda _: Sample(*run_measured([*doit, *variables], cwd=REPO, env=env)[:2]),
        lambda _: Sample(*run_measured([*doit, "list", *variables], cwd=REPO, env=env)[:2]),
    )
    print_comparison("demo plan, no-op rerun", "doit list", comparison, GOAL)


if __name__ == "__main__":
    main()
