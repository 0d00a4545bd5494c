"""No-op rerun of a 1,000-task plan against `doit list` on the same dodo (goal <= 1.2x), then at 4,000 tasks.

Both load the plan the same way; the gap between them is what deciding "up to date" costs: one action-cache
lookup per task. Both run as processes, alternating, medians compared, each with its peak memory.
Usage: python3 benchmarks/noop_rerun.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import REPO, Sample, compare, growth_line, pipeline_env, print_comparison, run_measured

GOAL = 1.2


def directory_plan(work: Path, tasks: int) -> Path:
    """A plan spec of ``tasks`` tasks in ``work``: half directory trees, half summaries of them."""
    names = []
    for index in range(tasks // 2):
        directory = work / "inputs" / f"d{index:04}"
        directory.mkdir(parents=True)
        (directory / "file.txt").write_text(f"content {index}\n")
        names.append(directory.name)
    spec = work / "plan.json"
    plan = {"builder": "directory-summaries", "base": str(work / "inputs"), "args": {"directories": names}}
    spec.write_text(json.dumps(plan))
    return spec


def run(tasks: int, repeat: int) -> Sample:
    work = Path(tempfile.mkdtemp(prefix="noop-bench-"))
    try:
        spec = directory_plan(work, tasks)
        env = pipeline_env(work, STELE_BENCH_DOIT_DB=str(work / "doit.sqlite"))
        doit = [sys.executable, "-m", "doit"]
        variables = [f"plan={spec}", f"store={work / 'store'}"]
        first = run_measured([*doit, *variables], cwd=REPO, env=env)
        print(f"\nplan: {tasks} tasks ({tasks // 2} directory trees + {tasks // 2} summaries)")
        print(f"first run {first[0]:.2f} s ({first[1]:.0f} MB peak)")
        comparison = compare(
            repeat,
            lambda _: Sample(*run_measured([*doit, *variables], cwd=REPO, env=env)[:2]),
            lambda _: Sample(*run_measured([*doit, "list", *variables], cwd=REPO, env=env)[:2]),
        )
        print_comparison(f"{tasks} tasks, no-op rerun", "doit list", comparison, GOAL)
        return comparison.ours
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    small = run(1_000, args.repeat)
    large = run(4_000, args.repeat)
    growth_line("no-op rerun", small, large, 4)


if __name__ == "__main__":
    main()
