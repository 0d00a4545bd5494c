"""Objects written one at a time as files: ``objects/ab/<hex>``, each written through ``tmp/``.

The bytes are written to a temporary, fsynced and hard-linked into place (an existing file is success: another
writer finished the same object first, with identical bytes by construction). A file is an object only once the
index records it (:mod:`.sqlite`); a file the index does not record is a killed writer's, swept by gc.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ...contracts import Digest
from .packs import naming

__all__ = ["LooseFiles", "older", "unlink_all"]


def older(path: Path, before: float) -> bool:
    """Whether ``path`` was last written before ``before``; a path gone meanwhile is not."""
    try:
        return path.stat().st_mtime < before
    except FileNotFoundError:  # finished or removed by another process since it was listed
        return False


def unlink_all(paths: Iterable[Path]) -> int:
    """Remove ``paths``; how many were there to remove."""
    removed = 0
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed += 1
    return removed


@dataclass(frozen=True, slots=True)
class LooseFiles:
    """The loose objects and in-flight writes of the store directory ``root``."""

    root: Path

    @property
    def temporaries(self) -> Path:
        return self.root / "tmp"

    def path(self, hex_: str) -> Path:
        return self.root / "objects" / hex_[:2] / hex_

    def write(self, digest: Digest, data: bytes) -> None:
        final = self.path(digest.hex)
        final.parent.mkdir(exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=self.temporaries, prefix=digest.hex[:16])
        try:
            with naming(temporary), os.fdopen(fd, "wb") as handle:  # a full disk names the file being written
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            # FileExistsError: another writer finished the same object first, with identical bytes by construction.
            with contextlib.suppress(FileExistsError):
                os.link(temporary, final)
        finally:
            os.unlink(temporary)

    def read(self, hex_: str) -> bytes | None:
        try:
            return self.path(hex_).read_bytes()
        except FileNotFoundError:
            return None

    def names_older(self, before: float) -> list[str]:
        """The hex names of the loose files last written before ``before``."""
        return [path.name for path in (self.root / "objects").glob("??/*") if older(path, before)]

    def temporaries_older(self, before: float) -> list[Path]:
        return [path for path in self.temporaries.iterdir() if older(path, before)]
