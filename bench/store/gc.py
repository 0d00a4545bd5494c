"""Mark and sweep from refs, keeping lineage and anything younger than a grace period.

Marking follows references inside documents and, for every marked object, the action results that produced it
(whose keys name their inputs), so an audit of a kept artifact can always walk down to its roots.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..contracts import Digest
from .actions import producers
from .references import references
from .store import Store

__all__ = ["GcReport", "gc"]

DEFAULT_GRACE_SECONDS = 3600.0


@dataclass(frozen=True)
class GcReport:
    kept: int
    deleted: int
    freed_bytes: int
    temporaries_removed: int


def _mark(store: Store) -> set[Digest]:
    marked: set[Digest] = set()
    pending: list[Digest] = list(store.refs().values())
    while pending:
        digest = pending.pop()
        if digest in marked or not store.has(digest):
            continue
        marked.add(digest)
        pending.extend(references(store, digest))
        pending.extend(producers(store, digest))
    return marked


def gc(store: Store, grace_seconds: float = DEFAULT_GRACE_SECONDS) -> GcReport:
    """Delete what no ref reaches and is older than ``grace_seconds`` (in-flight writes are young)."""
    cutoff = time.time() - grace_seconds
    # One transaction from mark to sweep: no writer can point a ref at an object between the two.
    with store.batch():
        marked = _mark(store)
        listed = list(store.backend.objects())
        doomed = [info.digest for info in listed if info.created < cutoff and info.digest not in marked]
        store.backend.delete(doomed)
    temporaries = store.backend.sweep_incomplete(cutoff)
    return GcReport(
        kept=len(listed) - len(doomed),
        deleted=len(doomed),
        freed_bytes=sum(digest.size for digest in doomed),
        temporaries_removed=temporaries,
    )
