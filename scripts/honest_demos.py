"""Run the demo N times from fresh stores and count what an honest run must never show: tamper findings, memory
channels an arm's attachment did not install, state reads, attachment failures, evidence the restored state does
not give, and exclusions other than the preregistered low-memory control's.

Each run is `python3 -m bench --store FRESH demo --published FRESH/published` (the images already built); its
published bundle's records and admissions are read back, and its store is asked how often the stand-in model ran
the tests with a `cd` into the workspace, which the harness repeats without it (the normalization grading must
understand). Exits 1 when any run shows any of them.

Usage: python3 scripts/honest_demos.py [--runs N] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.agent.arm_record import ArmRecord  # noqa: E402
from bench.agent.recorder import read_exchange_log  # noqa: E402
from bench.analysis.admission import Admission  # noqa: E402
from bench.results import load_bundle  # noqa: E402
from bench.store import Store  # noqa: E402
from bench.store.actions import ActionKey, recorded_from  # noqa: E402

LOW_MEMORY_CONTROL = "rule-letter-case"
CD_RULE = "run-tests"


def _cd_repetitions(store: Store) -> int:
    """Requests the stand-in answered with its cd-prefixed test run, over every arm of the run."""
    count = 0
    for result in recorded_from(store, 0):
        if store.get_document(result.key, ActionKey).stage != "paired-attempt":
            continue
        for name, digest in result.outputs.items():
            if name == "control" or name.startswith("treatments/"):
                exchanges = read_exchange_log(store, store.get_document(digest, ArmRecord).exchanges)
                count += sum(exchange.rule == CD_RULE for exchange in exchanges)
    return count


def _tally(work: Path) -> dict[str, object]:
    bundle = load_bundle(work / "published")
    arms = [arm for record in bundle.records.values() for arm in (record.control, record.treatment) if arm]
    excluded = Counter(
        decision.reason.value
        for digest, decision in bundle.admissions.items()
        if decision.decision is Admission.EXCLUDED and bundle.records[digest].key.challenge != LOW_MEMORY_CONTROL
    )
    return {
        "pairs": len(bundle.records),
        "admitted": sum(d.decision is Admission.ADMITTED for d in bundle.admissions.values()),
        "tamper_findings": sum(len(arm.tampered) for arm in arms),
        "foreign_channels": sum(len(arm.foreign_channels) for arm in arms),
        "state_reads": sum(len(arm.state_reads) for arm in arms),
        "not_rederived": sum(len(arm.not_rederived) for arm in arms),
        "attachment_failed": sum(arm.ending.value == "attachment-failed" for arm in arms),
        "excluded_other_than_low_memory_control": dict(excluded),
        "cd_requests": _cd_repetitions(Store(work / "store")),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep each run's store and bundle")
    args = parser.parse_args()
    failed = False
    for run in range(1, args.runs + 1):
        work = Path(tempfile.mkdtemp(prefix="honest-"))
        started = time.monotonic()
        demo = [sys.executable, "-m", "bench", "--store", str(work / "store"), "demo", "--published",
                str(work / "published")]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(REPO), "STELE_BENCH_DOIT_DB": str(work / "doit.sqlite")}
        done = subprocess.run(demo, cwd=REPO, env=env, capture_output=True, text=True, check=False)
        tally = _tally(work) if done.returncode == 0 else {"error": done.stderr.strip().splitlines()[-3:]}
        tally = {"run": run, "exit": done.returncode, "seconds": round(time.monotonic() - started), **tally}
        print(json.dumps(tally), flush=True)
        failed = failed or done.returncode != 0 or any(
            tally.get(key) for key in ("tamper_findings", "foreign_channels", "state_reads", "not_rederived",
                                       "attachment_failed", "excluded_other_than_low_memory_control")
        )  # fmt: skip
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
