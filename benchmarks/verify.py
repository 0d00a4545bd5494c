"""Verifying a published bundle: `stele-bench verify`'s hashing pass against `b3sum --check` (goal <= 1.5x).

The bundle is a large study's worth of published files: records, admissions, per-attempt receipts and the
lineage's objects (JSON of 1-40 KB) and a report page, with a MANIFEST.json listing each file's digest. Both
sides read the same files from RAM (/dev/shm): ours reads the manifest and re-hashes every file against it
(``rehash``, the first pass of ``verify``, which also checks each object against its name; the second re-runs
the lineage's deterministic stages and is not compared); b3sum reads a check file listing the same digests.
Then the same at 4x the bundle, for the growth line. With ``--bundle DIR`` (the demo's, ``published/example``), the
same comparison on a real published bundle copied to RAM instead. Usage:
python3 benchmarks/verify.py [--repeat N] [--bundle DIR]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.corpus_gen import _text
from benchmarks.harness import Sample, child_main, compare, growth_line, ours, peer, print_comparison, ram_directory

ATTEMPTS = 500  # at 1x; each attempt publishes a record, an admission and eight receipts
GOAL = 1.5


def write_bundle(root: Path, attempts: int, seed: int = 7) -> int:
    """A bundle of ``attempts`` attempts' files and its MANIFEST.json; returns the number of files."""
    from bench.contracts import Digest, PortablePath
    from bench.publish.manifest import PublicationManifest, PublishedFile, write_manifest

    rng = random.Random(seed)
    files: dict[str, bytes] = {"report/index.html": _text(rng, 400_000)}
    for attempt in range(attempts):
        challenge = f"challenge-{attempt % 40:02}"
        files[f"records/{attempt:064x}.json"] = _text(rng, rng.randint(4_000, 20_000))
        files[f"admissions/{attempt:064x}.json"] = _text(rng, rng.randint(500, 2_000))
        for receipt in ("verifier", "grade", "audit", "snapshot"):
            for arm in ("control", "treatment"):
                files[f"receipts/{challenge}/{attempt}/{arm}-{receipt}.json"] = _text(rng, rng.randint(800, 6_000))
        for _ in range(6):  # the lineage's objects: sessions, gateway exchanges, transcripts, named by digest
            data = _text(rng, rng.randint(2_000, 40_000))
            files[f"objects/{Digest.of(data).hex}.json"] = data
    for relative, data in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(data)
    listed = [PublishedFile(path=PortablePath(p), digest=Digest.of(d)) for p, d in sorted(files.items())]
    write_manifest(root, PublicationManifest(files=listed))
    with (root.parent / f"{root.name}.b3").open("w") as check:
        for entry in listed:
            check.write(f"{entry.digest.hex}  {entry.path}\n")
    return len(files)


def _rehash(args: list[str]) -> Callable[[], object]:
    from bench.publish.filedigests import BundleDigests
    from bench.publish.manifest import read_manifest
    from bench.publish.verification import rehash

    manifest = Path(args[0])

    def run() -> None:  # as verify begins: the hashing under way while the manifest is read
        with BundleDigests(manifest.parent) as files:
            assert not rehash(read_manifest(manifest), files), "the bundle must verify"

    return run


def run(scale: int, repeat: int, ram: Path) -> Sample:
    root = ram / f"bundle{scale}"
    count = write_bundle(root, ATTEMPTS * scale)
    size = sum(path.stat().st_size for path in root.rglob("*") if path.is_file())
    print(f"\n{scale}x: a bundle of {count} files, {size / 1e6:.1f} MB")
    comparison = compare(
        repeat,
        lambda _: ours("verify.py", "rehash", str(root / "MANIFEST.json")),
        lambda _: peer(["b3sum", "--check", "--quiet", str(ram / f"bundle{scale}.b3")], cwd=root),
    )
    print_comparison("verify, hashing pass", "b3sum --check", comparison, GOAL)
    return comparison.ours


def run_bundle(bundle: Path, repeat: int, ram: Path) -> Sample:
    """The hashing pass over a copy of a published bundle, against `b3sum --check` of its manifest's digests."""
    from bench.publish.manifest import read_manifest

    root = ram / "bundle"
    shutil.copytree(bundle, root)
    listed = read_manifest(root / "MANIFEST.json").files
    with (ram / "bundle.b3").open("w") as check:
        for entry in listed:
            check.write(f"{entry.digest.hex}  {entry.path}\n")
    size = sum(path.stat().st_size for path in root.rglob("*") if path.is_file())
    print(f"\n{bundle}: {len(listed)} files, {size / 1e6:.1f} MB")
    comparison = compare(
        repeat,
        lambda _: ours("verify.py", "rehash", str(root / "MANIFEST.json")),
        lambda _: peer(["b3sum", "--check", "--quiet", str(ram / "bundle.b3")], cwd=root),
    )
    print_comparison("verify of the bundle, hashing pass", "b3sum --check", comparison, GOAL)
    return comparison.ours


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--bundle", type=Path, help="a published bundle to measure instead of generated ones")
    args = parser.parse_args()
    if args.bundle is not None:
        with ram_directory("verify-bench-") as ram:
            run_bundle(args.bundle.resolve(), args.repeat, ram)
        return
    with ram_directory("verify-bench-") as ram:
        small = run(1, args.repeat, ram)
        large = run(4, args.repeat, ram)
    growth_line("verify", small, large, 4)


if __name__ == "__main__" and not child_main({"rehash": _rehash}):
    main()
