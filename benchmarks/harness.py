"""What every benchmark shares: each side in its own process, interleaved, medians, peak memory, growth lines.

Each measurement runs in a fresh process (ours: ``python3 benchmarks/<name>.py --child ...``; the peer: its
command line), so the peak resident memory the kernel reports for that process (``wait4``) is that side's alone.
Our side times the operation inside its process, after its imports (a pipeline pays those once per run, not per
stage); the peer's time includes starting its process, a few milliseconds. The two sides alternate, so load from
other work on the machine falls on both, and the median of each side is compared.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "REPO",
    "Comparison",
    "Sample",
    "child_main",
    "compare",
    "growth_line",
    "ours",
    "peer",
    "pipeline_env",
    "print_comparison",
    "ram_directory",
    "run_measured",
]

REPO = Path(__file__).resolve().parent.parent
_RESULT = "BENCHMARK-RESULT "  # the line a child prints with its timing


@dataclass(frozen=True)
class Sample:
    seconds: float
    peak_mb: float


@dataclass(frozen=True)
class Comparison:
    ours: Sample  # medians
    peer: Sample

    @property
    def ratio(self) -> float:
        return self.ours.seconds / self.peer.seconds


def run_measured(
    command: Sequence[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[float, float, str]:
    """Run ``command`` once under GNU time: wall seconds (its start included), peak memory (MB), stdout.

    The peak comes from GNU time, not from our own wait: a child forked from this process would otherwise
    report this process's resident size as its own, since the kernel keeps the high-water mark across exec.
    """
    with tempfile.NamedTemporaryFile(prefix="peak-", suffix=".txt") as peak:
        start = time.perf_counter()
        done = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", peak.name, *command],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            check=False,
        )
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout.decode()}")
        return seconds, int(Path(peak.name).read_text().split()[-1]) / 1024, done.stdout.decode()


def pipeline_env(work: Path, **variables: str) -> dict[str, str]:
    """The environment of a timed pipeline process (ours and ``doit list`` alike), as a user's install runs: the
    checkout importable, and its modules' bytecode cached (under ``work``, not in the checkout) by the first run and
    read by the timed ones. A process that compiles every module anew (``PYTHONDONTWRITEBYTECODE`` set, no cache)
    pays about 0.17 s on each side, which hid a third of the no-op rerun's gap in the ratio."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONPYCACHEPREFIX": str(work / "bytecode"), **variables}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def peer(argv: Sequence[str], *, cwd: Path | None = None) -> Sample:
    """Run the peer's command line once: wall time including its start, and its peak memory (a pipeline is
    run as ``sh -c``; the peak is then its largest process)."""
    seconds, peak, _ = run_measured(argv, cwd=cwd)
    return Sample(seconds, peak)


def ours(script: str, *args: str) -> Sample:
    """Run ``script --child ARGS`` once: the time it reports for the operation, and its peak memory."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    _, peak, output = run_measured([sys.executable, str(REPO / "benchmarks" / script), "--child", *args], env=env)
    lines = [line for line in output.splitlines() if line.startswith(_RESULT)]
    return Sample(json.loads(lines[-1][len(_RESULT) :])["seconds"], peak)


def child_main(operations: dict[str, Callable[[list[str]], Callable[[], object]]]) -> bool:
    """In a child (``--child NAME ARGS``): prepare operation NAME (imports, untimed), run it once and report
    its time; False when this process is not a child."""
    if len(sys.argv) < 3 or sys.argv[1] != "--child":
        return False
    operation = operations[sys.argv[2]](sys.argv[3:])
    os.sync()  # each side starts with no dirty pages of the other's to write back
    start = time.perf_counter()
    operation()
    print(_RESULT + json.dumps({"seconds": time.perf_counter() - start}), flush=True)
    return True


def compare(
    repeat: int, run_ours: Callable[[int], Sample], run_peer: Callable[[int], Sample], *, warm: bool = True
) -> Comparison:
    """Alternate the two sides ``repeat`` times (after one untimed round to warm caches); medians of each."""
    if warm:
        run_ours(-1)
        run_peer(-1)
    pairs = [(run_ours(attempt), run_peer(attempt)) for attempt in range(repeat)]
    return Comparison(_median([p[0] for p in pairs]), _median([p[1] for p in pairs]))


def _median(samples: list[Sample]) -> Sample:
    return Sample(statistics.median(s.seconds for s in samples), statistics.median(s.peak_mb for s in samples))


def print_comparison(title: str, peer_name: str, comparison: Comparison, goal: float) -> None:
    mine, theirs = comparison.ours, comparison.peer
    verdict = "holds" if comparison.ratio <= goal else "MISSED"
    print(
        f"{title}: ours {mine.seconds:.3f} s ({mine.peak_mb:.0f} MB peak), {peer_name} {theirs.seconds:.3f} s "
        f"({theirs.peak_mb:.0f} MB peak), ratio {comparison.ratio:.2f}x (goal <= {goal}x: {verdict})"
    )


def growth_line(title: str, small: Sample, large: Sample, factor: int) -> None:
    """How time and memory grow from 1x to ``factor``x: a time ratio at or under ``factor`` is linear or better."""
    time_growth = large.seconds / small.seconds
    memory_growth = large.peak_mb / small.peak_mb
    shape = "linear or better" if time_growth <= factor * 1.15 else "SUPER-LINEAR"
    print(
        f"{title} growth 1x -> {factor}x: time {small.seconds:.3f} -> {large.seconds:.3f} s ({time_growth:.2f}x, "
        f"{shape}); peak memory {small.peak_mb:.0f} -> {large.peak_mb:.0f} MB ({memory_growth:.2f}x)"
    )


@contextmanager
def ram_directory(prefix: str) -> Iterator[Path]:
    """A scratch directory in RAM (/dev/shm) where there is one, else in the temporary directory."""
    parent = "/dev/shm" if Path("/dev/shm").is_dir() else None
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
