"""The store contract on the in-memory backend."""

from __future__ import annotations

from pathlib import Path

from store_contract import StoreContract

from bench.contracts import Digest
from bench.store import Store
from bench.store.backends import MemoryBackend


class TestMemoryStore(StoreContract):
    def open_store(self, tmp_path: Path) -> Store:
        return Store.in_memory()

    def corrupt(self, store: Store, digest: Digest) -> None:
        assert isinstance(store.backend, MemoryBackend)
        data = store.backend.get(digest)
        assert data
        store.backend.corrupt(digest, bytes([data[0] ^ 1]) + data[1:])

    def lose(self, store: Store, digest: Digest) -> None:
        store.backend.delete([digest])  # memory keeps no index apart from its bytes


def test_every_memory_store_is_its_own() -> None:
    first, second = Store.in_memory(), Store.in_memory()
    digest = first.put_bytes(b"only in the first")
    assert first.location != second.location and not second.has(digest)
    assert repr(first) == f"Store(MemoryBackend({first.location!r}))"
