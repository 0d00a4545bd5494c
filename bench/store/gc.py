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


def _mark(store: Store) -> set[str]:
    marked: set[str] = set()
    pending: list[Digest] = list(store.refs().values())
    while pending:
        digest = pending.pop()
        if digest.hex in marked or not store.has(digest):
            continue
        marked.add(digest.hex)
        pending.extend(references(store, digest))
        pending.extend(producers(store, digest))
    return marked


def gc(store: Store, grace_seconds: float = DEFAULT_GRACE_SECONDS) -> GcReport:
    """Delete what no ref reaches and is older than ``grace_seconds`` (in-flight writes are young)."""
    cutoff = time.time() - grace_seconds
    connection = store.db.connection
    with store.batch():
        marked = _mark(store)
        rows = connection.execute("SELECT hex, size, data IS NULL FROM objects WHERE created < ?", (cutoff,)).fetchall()
        doomed = [(hex_, size, loose) for hex_, size, loose in rows if hex_ not in marked]
        connection.executemany("DELETE FROM objects WHERE hex = ?", [(hex_,) for hex_, _, _ in doomed])
        connection.execute(
            "DELETE FROM action_results WHERE NOT EXISTS "
            "(SELECT 1 FROM objects WHERE objects.hex = substr(action_results.result, 8, 64))"
        )
        connection.execute(
            "DELETE FROM produced WHERE NOT EXISTS "
            "(SELECT 1 FROM objects WHERE objects.hex = substr(produced.result, 8, 64))"
        )
    for hex_, _, loose in doomed:
        if loose:
            store.loose_path(hex_).unlink(missing_ok=True)
    # Loose files with no row: a writer killed between linking the bytes and recording them.
    orphans = [
        path
        for path in (store.root / "objects").glob("??/*")
        if path.stat().st_mtime < cutoff
        and connection.execute("SELECT 1 FROM objects WHERE hex = ?", (path.name,)).fetchone() is None
    ]
    temporaries = orphans + [path for path in (store.root / "tmp").iterdir() if path.stat().st_mtime < cutoff]
    for path in temporaries:
        path.unlink(missing_ok=True)
    kept = connection.execute("SELECT count(*) FROM objects").fetchone()[0]
    return GcReport(
        kept=kept,
        deleted=len(doomed),
        freed_bytes=sum(size for _, size, _ in doomed),
        temporaries_removed=len(temporaries),
    )
