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
    stale_temporaries: int = 0  # writes that never completed; invisible, removed by gc

    @property
    def status(self) -> FsckStatus:
        if self.corrupt and self.missing:
            return FsckStatus.CORRUPT_AND_MISSING
        if self.corrupt:
            return FsckStatus.CORRUPT
        return FsckStatus.MISSING if self.missing else FsckStatus.CLEAN


def fsck(store: Store) -> FsckReport:
    report = FsckReport(stale_temporaries=sum(1 for _ in (store.root / "tmp").iterdir()))
    connection = store.db.connection
    for hex_, size, is_document, packed in connection.execute("SELECT hex, size, is_document, data FROM objects"):
        report.objects += 1
        digest = Digest.from_parts(hex_, size)
        if packed is not None:
            data = bytes(packed)
        else:
            try:
                data = store.loose_path(hex_).read_bytes()
            except FileNotFoundError:
                report.missing.setdefault(digest, []).append("index")
                continue
        if Digest.of(data) != digest:
            report.corrupt.append(digest)
        elif is_document:
            for reference in walk_digests(json.loads(data)):
                if not store.has(reference):
                    report.missing.setdefault(reference, []).append(str(digest))
    for name, digest in store.refs().items():
        if not store.has(digest):
            report.missing.setdefault(digest, []).append(f"ref {name}")
    return report
