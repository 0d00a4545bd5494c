"""Restore of the example fixture with its 500-document distractor pool, against the same restore with no pool
(goal <= 2x), per memory system of the example suite.

What a paired attempt does before any arm: lay the evidence and the pool side by side (``seed_corpus``; not done
for no pool) and restore the memory through the real adapter and the system's own provisioner, with the timeouts
its declaration gives. Each side runs in its own process, alternating, medians compared (benchmarks/harness.py).
The reference memory keeps passage vectors between restores (bench/memory/vector_cache.py): the compared figures
are its steady state, after the untimed warm-up round; the first, cold restore of each (a fresh cache) is printed
beside them. Usage: python3 benchmarks/pool_restore.py [--repeat N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import REPO, Sample, child_main, compare, ours, print_comparison

GOAL = 2.0
POOL = 500
SUITE = REPO / "challenges" / "example"


def _restore(args: list[str]) -> Callable[[], object]:
    """The operation ``restore SYSTEM SIZE WORK``: seed the pool (size > 0) and restore SYSTEM, untimed imports."""
    from bench.agent.treatment_memory import system_provisioner
    from bench.provision.adapter import Provisioner
    from bench.provision.fixture import verify_artifact
    from bench.provision.pool import pool_documents, seed_corpus
    from bench.suite.suite import open_suite

    name, size, work = args[0], int(args[1]), Path(args[2])
    suite = open_suite(SUITE)
    system = suite.manifest.memory_system(name)
    base = system_provisioner(system, suite.root, suite.fixture_root)
    scratch = Path(tempfile.mkdtemp(dir=work))
    provisioner = Provisioner(
        (*base.prefix, "--home", str(scratch / "home")), base.fixture_root, timeouts=base.timeouts
    )
    assert suite.fixture.distractors is not None
    documents = pool_documents(suite.fixture.distractors, size)
    for path, data in documents:  # drawing the pool is the distractor-pool stage's work, done before the attempt
        (scratch / "pool" / path).parent.mkdir(parents=True, exist_ok=True)
        (scratch / "pool" / path).write_bytes(data)

    def restore() -> object:
        evidence = verify_artifact(suite.fixture_root, suite.fixture.evidence_corpus)
        corpus = seed_corpus(evidence, scratch / "pool", scratch / "evidence") if size else None
        request = provisioner.restore_request(suite.fixture, suite.manifest.fixture.graph_arm, "bench.1", corpus)
        return asyncio.run(provisioner.restore(request, []))

    return restore


def _one(system: str, size: int, work: Path) -> Sample:
    return ours("pool_restore.py", "restore", system, str(size), str(work))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="pool-restore-"))
    os.environ["RECALL_VECTORS"] = str(work / "vectors.sqlite")  # a fresh cache: the first restores are cold
    for system in ("reference", "server-memory", "static-notes"):
        _system(system, work, options.repeat)


def _system(system: str, work: Path, repeat: int) -> None:
    cold_noisy, cold_quiet = _one(system, POOL, work), _one(system, 0, work)
    print(f"\n{system}: first restore {cold_noisy.seconds:.3f} s with {POOL} distractors, {cold_quiet.seconds:.3f} s "
          "with none (the reference memory's vector cache fresh)")  # fmt: skip
    comparison = compare(repeat, lambda _: _one(system, POOL, work), lambda _: _one(system, 0, work), warm=False)
    print_comparison(f"{system} restore, {POOL} distractors", "no distractors", comparison, GOAL)


if __name__ == "__main__":
    if not child_main({"restore": _restore}):
        main()
