"""The distractor pools of a suite plan: one ``distractor-pool`` invocation per pool size the suite runs, and the
label each size's invocations carry.

A suite may run its challenges at several pool sizes (``FixtureRef.pool_sizes``); each size past zero draws its
pool once, and every challenge runs its attempts once per size. With one size the labels are the challenge's own,
so a suite that never names sizes plans exactly as before; with several, each label names its size.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..contracts import TreeDigest
from ..pipeline.builder import Link, PlanBuilder
from ..provision.fixture import verify_artifact
from ..stages.distractor_pool import PoolParams, distractor_pool
from ..store import Store, tree_from_directory
from ..suite.suite import Suite

__all__ = ["Variant", "pool_invocations"]


@dataclass(frozen=True)
class Variant:
    """One pool size a challenge runs at, and the label its invocations carry (plain when the suite runs one)."""

    challenge: str
    distractors: int
    several: bool  # the suite runs more than one pool size: labels name the size

    @property
    def label(self) -> str:
        return f"{self.challenge}-pool{self.distractors}" if self.several else self.challenge


def pool_invocations(plan: PlanBuilder, store: Store, suite: Suite, fixture_root: Path) -> dict[int, Link | None]:
    """A ``distractor-pool`` invocation per pool size the suite runs (none for size 0), by size."""
    pool = suite.fixture.distractors
    corpus: TreeDigest | None = None
    if pool is not None and pool.corpus is not None:
        with store.batch():
            corpus = tree_from_directory(store, Path(verify_artifact(fixture_root, pool.corpus).path))
    pools: dict[int, Link | None] = {}
    for size in suite.pool_sizes:
        if size == 0 or pool is None:
            pools[size] = None
            continue
        made = plan.add(f"pool-{size}", distractor_pool, PoolParams(pool=pool, size=size), corpus=corpus)
        pools[size] = made["pool"]
    return pools
