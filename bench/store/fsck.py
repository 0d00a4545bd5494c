"""Re-hash every object and check every reference: the store's integrity report.

References are read by type (:mod:`.references`), so a digest kept as a value (a preregistration's digest, a
comparability key's id) is never reported missing. What fsck finds, ``fsck --repair`` (:mod:`.repair`) heals.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from ..contracts import Digest
from .references import document_references
from .store import Store

__all__ = ["INDEX", "FsckReport", "FsckStatus", "fsck", "scan"]

INDEX = "index"  # the referrer of an object the index lists whose bytes are gone


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

    def lost(self) -> list[Digest]:
        """Objects the index lists whose bytes are gone (a missing object only referred to is not listed)."""
        return sorted(digest for digest, referrers in self.missing.items() if INDEX in referrers)


Referred = Callable[[Digest, list[Digest]], None]  # called with each document and what it refers to


def fsck(store: Store) -> FsckReport:
    """Check the storage itself: a local cache in front of it is passed by (its copies are checked on read)."""
    return scan(store)


def scan(store: Store, referred: Referred | None = None) -> FsckReport:
    """:func:`fsck`, telling ``referred`` what each readable document refers to (repair's reverse index)."""
    backend = store.backend.uncached()
    store = Store(backend)
    report = FsckReport(stale_temporaries=backend.count_incomplete())
    listed = list(backend.objects())
    present = {info.digest for info in listed}
    for info, data in zip(listed, backend.get_many([info.digest for info in listed]), strict=True):
        report.objects += 1
        if data is None:
            report.missing.setdefault(info.digest, []).append(INDEX)
        elif Digest.of(data) != info.digest:
            report.corrupt.append(info.digest)
        elif info.is_document:
            named = document_references(data)
            if referred is not None:
                referred(info.digest, named)
            for reference in named:
                if reference not in present:
                    report.missing.setdefault(reference, []).append(str(info.digest))
    for name, digest in store.refs().items():
        if digest not in present:
            report.missing.setdefault(digest, []).append(f"ref {name}")
    return report
