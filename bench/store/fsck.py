"""Re-hash every object and check every reference: the store's integrity report."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field

from ..contracts import Digest
from .references import walk_digests
from .store import Store

__all__ = ["FsckReport", "FsckStatus", "fsck"]


class FsckStatus(enum.IntEnum):
    """Exit codes of `stele-bench store fsck`: each problem has its own, both together have a third."""

    CLEAN = 0
    CORRUPT = 3
    MISSING = 4
    CORRUPT_AND_MISSING = 5


@dataclass
class FsckReport:
    objects: int = 0
    corrupt: list[Digest] = field(default_factory=list)
    missing: dict[Digest, list[str]] = field(default_factory=dict)  # missing object -> who refers to it
    stale_temporaries: int = 0  # writes never recorded (a killed writer's); invisible, removed by gc

    @property
    def status(self) -> FsckStatus:
        if self.corrupt and self.missing:
            return FsckStatus.CORRUPT_AND_MISSING
        if self.corrupt:
            return FsckStatus.CORRUPT
        return FsckStatus.MISSING if self.missing else FsckStatus.CLEAN


def fsck(store: Store) -> FsckReport:
    """Check the storage itself: a local cache in front of it is passed by (its copies are checked on read)."""
    backend = store.backend.uncached()
    store = Store(backend)
    report = FsckReport(stale_temporaries=backend.count_incomplete())
    listed = list(backend.objects())
    for info, data in zip(listed, backend.get_many([info.digest for info in listed]), strict=True):
        report.objects += 1
        if data is None:
            report.missing.setdefault(info.digest, []).append("index")
        elif Digest.of(data) != info.digest:
            report.corrupt.append(info.digest)
        elif info.is_document:
            for reference in walk_digests(json.loads(data)):
                if not store.has(reference):
                    report.missing.setdefault(reference, []).append(str(info.digest))
    for name, digest in store.refs().items():
        if not store.has(digest):
            report.missing.setdefault(digest, []).append(f"ref {name}")
    return report
