"""The content-addressed store: bytes named by BLAKE3, documents through their contracts, refs.

Layout of a store directory::

    index.sqlite        small objects (packed), refs, the action cache
    objects/ab/<hex>    loose objects of PACK_LIMIT bytes or more
    tmp/                in-flight loose writes; never visible as objects

A write is visible only once complete: loose bytes are written to ``tmp/``, fsynced and hard-linked into place
(an existing object is success), then the object's row is inserted. Every read re-hashes what it returns.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar, cast

from pydantic import ValidationError

from ..contracts import BlobDigest, Digest, Document, Ref, canonical_bytes
from ..errors import ContractError, ObjectCorrupt, ObjectMissing, StoreError
from .database import Database

__all__ = ["PACK_LIMIT", "Store"]

# Objects below this size are packed into SQLite; measured in benchmarks/store_ingest.py.
PACK_LIMIT = 256 * 1024
_BATCH = 500  # objects per query in get_many; well under SQLite's limit on bound parameters

D = TypeVar("D", bound=Document)


class Store:
    """A store directory; safe to open from several processes and threads at once."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        try:
            (self.root / "objects").mkdir(parents=True, exist_ok=True)
            (self.root / "tmp").mkdir(exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the store at {self.root}: {exc.strerror}") from exc
        self.db = Database(self.root / "index.sqlite")

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    # -- transactions ------------------------------------------------------------------------------

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group many writes into one transaction; all of them become visible together, or none."""
        self.db.begin()
        try:
            yield
        except BaseException:
            self.db.rollback()
            raise
        self.db.commit()

    # -- bytes -------------------------------------------------------------------------------------

    def put_bytes(self, data: bytes, *, document: bool = False) -> BlobDigest:
        digest = BlobDigest.of(data)
        packed: bytes | None = data
        if len(data) >= PACK_LIMIT:
            if self.has(digest):
                return digest
            self._write_loose(digest, data)
            packed = None
        self.db.connection.execute(
            "INSERT OR IGNORE INTO objects (hex, size, is_document, data, created) VALUES (?, ?, ?, ?, ?)",
            (digest.hex, len(data), int(document), packed, time.time()),
        )
        return digest

    def get_bytes(self, digest: Digest) -> bytes:
        """The bytes named by ``digest``, re-hashed; a mismatch is refused as corrupt."""
        row = self.db.connection.execute("SELECT size, data FROM objects WHERE hex = ?", (digest.hex,)).fetchone()
        return self._verified(digest, row)

    def get_many(self, digests: Sequence[Digest]) -> Iterator[tuple[Digest, bytes]]:
        """Verified bytes of many objects in the order given, fetched a batch per query (one round trip per
        object is most of the cost of reading a tree of small files)."""
        for start in range(0, len(digests), _BATCH):
            batch = digests[start : start + _BATCH]
            marks = ",".join("?" * len(batch))
            query = f"SELECT hex, size, data FROM objects WHERE hex IN ({marks})"
            rows = {row[0]: row[1:] for row in self.db.connection.execute(query, [d.hex for d in batch])}
            for digest in batch:
                yield digest, self._verified(digest, rows.get(digest.hex))

    def has(self, digest: Digest) -> bool:
        row = self.db.connection.execute("SELECT size FROM objects WHERE hex = ?", (digest.hex,)).fetchone()
        return row is not None and row[0] == digest.size

    def is_document(self, digest: Digest) -> bool:
        row = self.db.connection.execute("SELECT is_document FROM objects WHERE hex = ?", (digest.hex,)).fetchone()
        if row is None:
            raise ObjectMissing(digest)
        return bool(row[0])

    def loose_path(self, hex_: str) -> Path:
        return self.root / "objects" / hex_[:2] / hex_

    def _verified(self, digest: Digest, row: tuple[int, bytes | None] | None) -> bytes:
        """The bytes of an index row (packed, or the loose file it stands for), re-hashed against ``digest``."""
        if row is None or row[0] != digest.size:
            raise ObjectMissing(digest)
        if row[1] is not None:
            data = bytes(row[1])
        else:
            try:
                data = self.loose_path(digest.hex).read_bytes()
            except FileNotFoundError as exc:
                raise ObjectMissing(digest) from exc
        actual = Digest.of(data)
        if actual != digest:
            raise ObjectCorrupt(digest, actual)
        return data

    def _write_loose(self, digest: Digest, data: bytes) -> None:
        final = self.loose_path(digest.hex)
        final.parent.mkdir(exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=self.root / "tmp", prefix=digest.hex[:16])
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            # FileExistsError: another writer finished the same object first, with identical bytes by construction.
            with contextlib.suppress(FileExistsError):
                os.link(temporary, final)
        finally:
            os.unlink(temporary)

    # -- documents ---------------------------------------------------------------------------------

    def put_document(self, document: D) -> Ref[D]:
        """Store ``document`` canonically; the digest's type names its contract (``Ref[ArmRecord]``)."""
        ref: type[Ref[Any]] = Ref[type(document)]  # type: ignore[misc]
        return cast(Ref[D], ref(self.put_bytes(canonical_bytes(document), document=True)))

    def get_document(self, digest: Digest, model: type[D]) -> D:
        data = self.get_bytes(digest)
        try:
            return model.model_validate_json(data)
        except ValidationError as exc:
            raise ContractError(f"object {digest} is not a valid {model.__name__}: {exc}") from exc

    # -- refs --------------------------------------------------------------------------------------

    def set_ref(self, name: str, digest: Digest) -> None:
        """Point ``name`` at ``digest``; refs are the roots that gc keeps."""
        if not self.has(digest):
            raise ObjectMissing(digest)
        self.db.connection.execute(
            "INSERT INTO refs (name, digest, updated) VALUES (?, ?, ?) "
            "ON CONFLICT(name) DO UPDATE SET digest = excluded.digest, updated = excluded.updated",
            (name, str(digest), time.time()),
        )

    def get_ref(self, name: str) -> Digest | None:
        row = self.db.connection.execute("SELECT digest FROM refs WHERE name = ?", (name,)).fetchone()
        return None if row is None else Digest(row[0])

    def refs(self) -> dict[str, Digest]:
        rows = self.db.connection.execute("SELECT name, digest FROM refs ORDER BY name").fetchall()
        return {name: Digest(digest) for name, digest in rows}

    def delete_ref(self, name: str) -> bool:
        return self.db.connection.execute("DELETE FROM refs WHERE name = ?", (name,)).rowcount > 0

    # -- listing -----------------------------------------------------------------------------------

    def digests(self) -> Iterator[Digest]:
        """Every stored object, in name order."""
        rows = self.db.connection.execute("SELECT hex, size FROM objects ORDER BY hex").fetchall()
        for hex_, size in rows:
            yield Digest.from_parts(hex_, size)
