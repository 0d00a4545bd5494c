"""The store's disk use during a run against the finished store's (goal <= 1.5x): a disk that holds the result
must hold the run. The WAL is checkpointed every 4 MiB and cut back after (bench/store/backends/transactions.py);
with SQLite's default (1,000 pages of 64 KiB) a demo whose store ends at 14 MB grew a WAL past 30 MB.

One `stele-bench demo --attempts 1` into a fresh project, the store directory's bytes (every file, the WAL
included) sampled every 0.2 s; the peak, the WAL's peak and the finished size are printed with the ratio.
Usage: python3 benchmarks/store_peak.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOAL = 1.5


def _bytes(root: Path) -> tuple[int, int]:
    """The bytes of every file under ``root``, and of the WAL alone."""
    total = wal = 0
    for path in root.rglob("*"):
        try:
            size = path.stat().st_size if path.is_file() else 0
        except OSError:  # gone between the listing and the stat (a temporary)
            continue
        total += size
        wal += size if path.name.endswith("-wal") else 0
    return total, wal


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="store-peak-"))
    project = work / "project"
    subprocess.run([sys.executable, "-m", "bench", "init", str(project)], cwd=REPO, check=True, capture_output=True)
    store = project / "store"
    peaks = [0, 0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            if store.is_dir():
                total, wal = _bytes(store)
                peaks[0], peaks[1] = max(peaks[0], total), max(peaks[1], wal)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    command = [sys.executable, "-m", "bench", "--project", str(project), "demo", "--attempts", "1"]
    ran = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    done.set()
    sampler.join()
    final, wal = _bytes(store)
    if ran.returncode != 0:
        raise SystemExit(f"the demo failed (exit {ran.returncode}): {ran.stderr.strip().splitlines()[-1:]}")
    ratio = peaks[0] / final
    print(f"store during the demo: peak {peaks[0] / 1e6:.1f} MB (WAL peak {peaks[1] / 1e6:.1f} MB)")
    print(f"finished store: {final / 1e6:.1f} MB (WAL {wal / 1e6:.1f} MB)")
    verdict = "met" if ratio <= GOAL else "MISSED"
    print(f"peak / finished: {ratio:.2f}x (goal <= {GOAL}x: {verdict})")


if __name__ == "__main__":
    main()
