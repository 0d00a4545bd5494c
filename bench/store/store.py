"""The content-addressed store: bytes named by BLAKE3, documents through their contracts, refs.

:class:`Store` is the one facade every caller uses, whatever keeps the bytes (see ``backends/``): it names
bytes by their digest, re-hashes every read so a corrupt object is refused wherever it is stored, and only lets
refs point at stored objects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TypeVar, cast

from pydantic import ValidationError

from ..contracts import BlobDigest, Digest, Document, Ref, canonical_bytes
from ..contracts.digests import blake3_hex
from ..contracts.files import validation_summary
from ..errors import ContractError, ObjectCorrupt, ObjectMissing
from .backends import MemoryBackend, StoreBackend
from .location import open_backend

__all__ = ["Store"]

D = TypeVar("D", bound=Document)


class Store:
    """Objects, refs and the action cache over a backend; ``Store(path)`` is a store directory (SQLite and
    loose files) and ``Store("s3://BUCKET/PREFIX")`` a bucket (see ``location.py``), each safe to open from
    several processes and threads at once."""

    def __init__(self, where: Path | str | StoreBackend) -> None:
        self.backend = where if isinstance(where, StoreBackend) else open_backend(where)

    @classmethod
    def in_memory(cls) -> Store:
        return cls(MemoryBackend())

    def __repr__(self) -> str:
        return f"Store({self.backend!r})"

    @property
    def location(self) -> str:
        """The backend's identity: equal for two stores over the same objects."""
        return self.backend.location

    def batch(self) -> AbstractContextManager[None]:
        """Group many writes into one transaction: all of them become visible together, or none if the block
        raises. A batch inside a batch is undone alone when it raises."""
        return self.backend.transaction()

    # -- bytes -------------------------------------------------------------------------------------

    def put_bytes(self, data: bytes, *, document: bool = False) -> BlobDigest:
        digest = BlobDigest.of(data)
        self.backend.put(digest, data, document=document)
        return digest

    def put_many(self, datas: Sequence[bytes], *, document: bool = False) -> list[BlobDigest]:
        """Store every item of ``datas`` in one transaction, as the backend writes in bulk best (the SQLite
        backend appends them to one pack); returns their digests in order."""
        digests = [BlobDigest.of(data) for data in datas]
        self.backend.put_many(list(zip(digests, datas, strict=True)), document=document)
        return digests

    def get_bytes(self, digest: Digest) -> bytes:
        """The bytes named by ``digest``, re-hashed; a mismatch is refused as corrupt."""
        return _verified(digest, self.backend.get(digest))

    def get_many(self, digests: Sequence[Digest]) -> Iterator[tuple[Digest, bytes]]:
        """Verified bytes of many objects in the order given, fetched as the backend batches best."""
        for digest, data in zip(digests, self.backend.get_many(digests), strict=True):
            yield digest, _verified(digest, data)

    def get_unordered(self, digests: Sequence[Digest]) -> Iterator[tuple[Digest, bytes]]:
        """Verified bytes of each object, in the order the backend reads fastest (for packed objects, pack
        order): for a caller that needs every object but no particular order, such as a scan of a whole tree."""
        for chunk in self.backend.get_unordered(digests):
            for digest, data in chunk:
                yield digest, _verified(digest, data)

    def reopener(self) -> Callable[[], Store] | None:
        """How a process forked from this one opens its own store over the same objects, to be called there;
        None when the backend cannot be read from a forked process (see :meth:`StoreBackend.reopener`)."""
        backend = self.backend.reopener()
        return None if backend is None else lambda: Store(backend())

    def has(self, digest: Digest) -> bool:
        return self.backend.stat(digest) is not None

    def has_many(self, digests: Sequence[Digest]) -> set[Digest]:
        """Which of ``digests`` are stored: :meth:`has` of each, asked as the backend batches best."""
        return {
            digest for digest, info in zip(digests, self.backend.stat_many(digests), strict=True) if info is not None
        }

    def is_document(self, digest: Digest) -> bool:
        info = self.backend.stat(digest)
        if info is None:
            raise ObjectMissing(digest)
        return info.is_document

    # -- documents ---------------------------------------------------------------------------------

    def put_document(self, document: D) -> Ref[D]:
        """Store ``document`` canonically; the digest's type names its contract (``Ref[ArmRecord]``)."""
        ref: type[Ref[Any]] = Ref[type(document)]  # type: ignore[misc,assignment]  # made at run time, see Ref
        return cast(Ref[D], ref(self.put_bytes(canonical_bytes(document), document=True)))

    def get_document(self, digest: Digest, model: type[D]) -> D:
        return _parsed(digest, self.get_bytes(digest), model)

    def get_documents(self, digests: Sequence[Digest], model: type[D]) -> list[D]:
        """:meth:`get_document` of each digest, read in one batch."""
        return [_parsed(digest, data, model) for digest, data in self.get_many(digests)]

    # -- refs --------------------------------------------------------------------------------------

    def set_ref(self, name: str, digest: Digest) -> None:
        """Point ``name`` at ``digest``; refs are the roots that gc keeps."""
        if not self.has(digest):
            raise ObjectMissing(digest)
        self.backend.set_ref(name, digest)

    def compare_and_set_ref(self, name: str, expected: Digest | None, new: Digest) -> bool:
        """Point ``name`` at ``new`` only if it points at ``expected`` (None: only if absent); False, changing
        nothing, when another writer moved it first: re-read it and decide again."""
        if not self.has(new):
            raise ObjectMissing(new)
        return self.backend.compare_and_set_ref(name, expected, new)

    def get_ref(self, name: str) -> Digest | None:
        return self.backend.get_ref(name)

    def refs(self) -> dict[str, Digest]:
        return self.backend.refs()

    def delete_ref(self, name: str) -> bool:
        return self.backend.delete_ref(name)

    # -- listing -----------------------------------------------------------------------------------

    def digests(self) -> Iterator[Digest]:
        """Every stored object, in name order."""
        for info in self.backend.objects():
            yield info.digest


def _parsed(digest: Digest, data: bytes, model: type[D]) -> D:
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        raise ContractError(f"object {digest} is not a valid {model.__name__}: {validation_summary(exc)}") from exc


def _verified(digest: Digest, data: bytes | None) -> bytes:
    """``data`` if it hashes to ``digest``; absent bytes are missing, other bytes corrupt."""
    if data is None:
        raise ObjectMissing(digest)
    if f"blake3:{blake3_hex(data)}:{len(data)}" != digest:  # the digest's own spelling: one comparison per read
        raise ObjectCorrupt(digest, Digest.of(data))
    return data
