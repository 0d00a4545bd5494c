"""The command line as a person meets it (issue 39): each command's wall time and peak memory beside a peer.

Every row runs whole processes, start-up and imports included (that is what a shell or an editor waits for), under
GNU time, the two sides alternating, medians compared. Rows and goals:

  --version, --help          peer `doit --version`                  goal <= 2x
  ls runs                    peer `python3 -c pass` (context)       goal <= 0.25 s
  status                     peer `python3 -c pass` (context)       goal <= 0.6 s and <= 120 MB
  demo again (no-op+verify)  peer `python3 -c pass` (context)       goal <= 2 s
  verify of the demo bundle  peer `b3sum --check` of its files      goal <= 10x

It needs a project with one finished demo run (`stele-bench init DIR`, then `stele-bench demo` from DIR, a few
minutes). Usage: python3 benchmarks/cli_speed.py --project DIR [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import Comparison, Sample, compare, pipeline_env, run_measured

_Run = Callable[[int], Sample]


@dataclass(frozen=True)
class Row:
    title: str
    peer_name: str
    comparison: Comparison
    goal: str
    holds: bool


def _runner(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> _Run:
    def run(_: int) -> Sample:
        seconds, peak, _output = run_measured(argv, cwd=cwd, env=env)
        return Sample(seconds, peak)

    return run


def _check_file(bundle: Path, destination: Path) -> int:
    """A `b3sum --check` file listing every file MANIFEST.json lists, with the same digests; the count."""
    listed = json.loads((bundle / "MANIFEST.json").read_text(encoding="utf-8"))["files"]
    with destination.open("w", encoding="utf-8") as check:
        for entry in listed:
            algorithm, digest, _size = entry["digest"].split(":")
            if algorithm != "blake3":
                raise SystemExit(f"{bundle}: {entry['path']} is listed with {algorithm}, not blake3")
            check.write(f"{digest}  {entry['path']}\n")
    return len(listed)


def rows(project: Path, repeat: int, work: Path) -> list[Row]:
    env = pipeline_env(work)
    bench = [sys.executable, "-m", "bench"]
    doit = _runner(["doit", "--version"], project, env)
    bare = _runner([sys.executable, "-c", "pass"], project, env)
    bundle = project / "published" / "example"
    files = _check_file(bundle, work / "bundle.b3")
    b3sum = _runner(["b3sum", "--check", "--quiet", str(work / "bundle.b3")], bundle, env)
    verify = [*bench, "verify", str(bundle / "MANIFEST.json"), "--trust", str(project / "keys/publisher.key.pub")]

    def measured(argv: list[str], peer: _Run) -> Comparison:
        return compare(repeat, _runner(argv, project, env), peer)

    version = measured([*bench, "--version"], doit)
    help_ = measured([*bench, "--help"], doit)
    listing = measured([*bench, "ls", "runs"], bare)
    status = measured([*bench, "status"], bare)
    demo = measured([*bench, "demo"], bare)
    verified = measured(verify, b3sum)
    return [
        Row("--version", "doit --version", version, "<= 2x", version.ratio <= 2),
        Row("--help", "doit --version", help_, "<= 2x", help_.ratio <= 2),
        Row("ls runs", "python3 -c pass", listing, "<= 0.25 s", listing.ours.seconds <= 0.25),
        Row(
            "status",
            "python3 -c pass",
            status,
            "<= 0.6 s, <= 120 MB",
            status.ours.seconds <= 0.6 and status.ours.peak_mb <= 120,
        ),
        Row("demo again (no-op, verify)", "python3 -c pass", demo, "<= 2 s", demo.ours.seconds <= 2),
        Row(f"verify ({files} files)", "b3sum --check", verified, "<= 10x", verified.ratio <= 10),
    ]


def print_rows(found: list[Row]) -> None:
    print(f"{'row':<28} {'ours':>16} {'peer':>32} {'ratio':>7}  goal                 holds")
    for row in found:
        mine, theirs = row.comparison.ours, row.comparison.peer
        ours_text = f"{mine.seconds:.3f} s {mine.peak_mb:.0f} MB"
        peer_text = f"{row.peer_name} {theirs.seconds:.3f} s {theirs.peak_mb:.0f} MB"
        verdict = "holds" if row.holds else "MISSED"
        ratio = f"{row.comparison.ratio:.2f}x"
        print(f"{row.title:<28} {ours_text:>16} {peer_text:>32} {ratio:>7}  {row.goal:<20} {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, required=True, help="a project with one finished demo run")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    project = args.project.resolve()
    if not (project / "published" / "example" / "MANIFEST.json").is_file():
        raise SystemExit(f"{project} holds no published demo bundle; run `stele-bench demo` there first")
    work = Path(tempfile.mkdtemp(prefix="cli-speed-"))
    try:
        print_rows(rows(project, args.repeat, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
