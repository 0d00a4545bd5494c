"""The store contract on the in-memory backend."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_contract import StoreContract

from bench.contracts import Digest
from bench.errors import ContractError
from bench.publish.bundle_store import BundleStore
from bench.store import Store
from bench.store.actions import ActionKey
from bench.store.backends import MemoryBackend
from bench.store.trees import TreeObject


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


class TestBundleStore(TestMemoryStore):
    """The same contract holds for the store ``verify`` reads a bundle into, which checks each read once."""

    def open_store(self, tmp_path: Path) -> Store:
        return BundleStore()


def test_the_bundle_store_reads_a_document_once_and_refuses_a_bad_one_every_time() -> None:
    tree = TreeObject(entries=())
    for store in (BundleStore(), Store.in_memory()):
        ref = store.put_document(tree)
        same = store.get_document(ref, TreeObject) is store.get_document(ref, TreeObject)
        assert same is isinstance(store, BundleStore)  # any other store reads through the contract every time
        assert store.get_documents([ref, ref], TreeObject) == [tree, tree]
        bad = store.put_bytes(b'{"kind": "tree", "schema_version": 1, "entries": 7}', document=True)
        for _ in range(2):  # a refusal is not remembered
            with pytest.raises(ContractError, match=bad.hex):
                store.get_document(bad, TreeObject)
        with pytest.raises(ContractError, match=ref.hex):  # read under another contract: checked under that one
            store.get_document(ref, ActionKey)
