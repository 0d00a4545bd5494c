"""The workspace tar stream: write_tar's bytes, errors reach the reader, an abandoned reader frees the writer."""

from __future__ import annotations

import io
import tarfile
import threading

import pytest

from bench.contracts import Digest
from bench.errors import ObjectMissing
from bench.sandbox.layout import WORKSPACE_MTIME
from bench.sandbox.tarpipe import chunk_stream, tree_chunks
from bench.store import Store, tree_from_tar, write_tar
from tests.sandbox.sandbox_helpers import make_tree


def test_the_chunks_are_write_tars_bytes_and_read_back_to_the_same_tree(store: Store) -> None:
    """Dated as every container's workspace is: alike in every arm, never the 1970 epoch."""
    tree = make_tree(store, {f"d{i % 7}/f{i}": bytes([i % 251]) * (i * 97) for i in range(300)})
    expected = io.BytesIO()
    write_tar(store, tree, expected, prefix="workspace", uid=1000, gid=1000, mtime=WORKSPACE_MTIME)
    chunks = list(tree_chunks(store, tree, prefix="workspace", uid=1000, gid=1000))
    assert b"".join(chunks) == expected.getvalue()
    with tarfile.open(fileobj=io.BytesIO(expected.getvalue())) as archive:
        assert {member.mtime for member in archive} == {WORKSPACE_MTIME} and WORKSPACE_MTIME > 0
    assert tree_from_tar(store, chunk_stream(iter(chunks)), strip="workspace") == tree


def test_a_writer_error_reaches_the_reader(store: Store) -> None:
    with pytest.raises(ObjectMissing):
        list(tree_chunks(store, Digest.of(b"no such tree"), prefix="w", uid=0, gid=0))


def test_an_abandoned_reader_releases_the_writer(store: Store) -> None:
    tree = make_tree(store, {f"f{i}": bytes(4096) + str(i).encode() for i in range(3000)})
    stream = tree_chunks(store, tree, prefix="w", uid=0, gid=0)
    next(stream)
    stream.close()
    assert [t.name for t in threading.enumerate() if t.name == "tar-writer"] == []
