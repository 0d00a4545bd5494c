"""Ingest of a 10,000-file, ~85 MB tree into a fresh store, against `b3sum` over the same files (goal <= 2x).

Both sides read the same files from the page cache. b3sum writes nothing; ours writes a store (SQLite index and
one pack): into RAM (/dev/shm) for the compared figure, so disk write-back from other work on the machine does
not decide it, and onto disk (the temporary directory) as well, printed beside it. Then the same at 4x the tree,
for the growth line. Usage: python3 benchmarks/store_ingest.py [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.corpus_gen import generate_tree
from benchmarks.harness import Sample, child_main, compare, growth_line, ours, peer, print_comparison, ram_directory

FILES, BYTES = 10_000, 80 * 1024 * 1024
GOAL = 2.0


def _ingest(args: list[str]) -> Callable[[], object]:
    from bench.store import Store, tree_from_directory

    return lambda: tree_from_directory(Store(args[1]), Path(args[0]))


def _fresh(path: Path) -> str:
    shutil.rmtree(path, ignore_errors=True)
    return str(path)


def run(scale: int, repeat: int, work: Path, ram: Path) -> Sample:
    source = work / f"src{scale}"
    written = generate_tree(source, FILES * scale, BYTES * scale)
    files = sorted(str(path.relative_to(source)) for path in source.rglob("*.py"))
    print(f"\n{scale}x: {len(files)} files, {written / 1e6:.1f} MB")
    comparison = compare(
        repeat,
        lambda _: ours("store_ingest.py", "ingest", str(source), _fresh(ram / "store")),
        lambda _: peer(["b3sum", "--no-names", *files], cwd=source),
    )
    print_comparison("ingest, store in RAM", "b3sum", comparison, GOAL)
    on_disk = compare(
        repeat,
        lambda _: ours("store_ingest.py", "ingest", str(source), _fresh(work / "store")),
        lambda _: peer(["b3sum", "--no-names", *files], cwd=source),
        warm=False,
    )
    print_comparison("ingest, store on disk", "b3sum", on_disk, GOAL)
    again = ours("store_ingest.py", "ingest", str(source), str(work / "store"))
    print(f"re-ingest into the same store, every object present: {again.seconds:.3f} s")
    shutil.rmtree(source)
    shutil.rmtree(work / "store", ignore_errors=True)
    return comparison.ours


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ingest-bench-"))
    try:
        with ram_directory("ingest-bench-") as ram:
            small = run(1, args.repeat, work, ram)
            large = run(4, args.repeat, work, ram)
        growth_line("ingest", small, large, 4)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__" and not child_main({"ingest": _ingest}):
    main()
