"""The store contract on a store directory (SQLite index and loose files), and what only that backend does:
packing, loose files, several processes, a writer killed mid-ingest."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from store_contract import StoreContract

from bench.contracts import Digest
from bench.store import PACK_LIMIT, Store, TreeObject, tree_from_directory
from bench.store.backends import SqliteBackend
from bench.store.fsck import FsckStatus, fsck
from bench.store.gc import gc


def _backend(store: Store) -> SqliteBackend:
    assert isinstance(store.backend, SqliteBackend)
    return store.backend


@contextlib.contextmanager
def _index(store: Store) -> Iterator[sqlite3.Connection]:
    """A connection of the test's own to the store's index, as another program would open it."""
    with contextlib.closing(sqlite3.connect(_backend(store).root / "index.sqlite", isolation_level=None)) as index:
        yield index


class TestSqliteStore(StoreContract):
    def open_store(self, tmp_path: Path) -> Store:
        return Store(tmp_path / "store")

    def corrupt(self, store: Store, digest: Digest) -> None:
        path = _backend(store).loose_path(digest.hex)
        if path.exists():
            raw = bytearray(path.read_bytes())
            raw[len(raw) // 2] ^= 0x80
            path.write_bytes(bytes(raw))
            return
        with _index(store) as index:
            (data,) = index.execute("SELECT data FROM objects WHERE hex = ?", (digest.hex,)).fetchone()
            index.execute("UPDATE objects SET data = ? WHERE hex = ?", (bytes([data[0] ^ 1]) + data[1:], digest.hex))


def test_small_objects_are_packed_and_large_ones_loose(store: Store) -> None:
    small, large = store.put_bytes(b"small object"), store.put_bytes(os.urandom(PACK_LIMIT))
    assert _backend(store).loose_path(large.hex).is_file()
    assert not _backend(store).loose_path(small.hex).exists()
    assert store.location == str((_backend(store).root).resolve())
    assert repr(store) == f"Store(SqliteBackend({str(_backend(store).root)!r}))"


def test_gc_removes_the_loose_files_of_what_it_deletes(store: Store) -> None:
    garbage = store.put_bytes(os.urandom(PACK_LIMIT))
    assert gc(store, grace_seconds=0).deleted == 1
    assert not _backend(store).loose_path(garbage.hex).exists()


def test_fsck_reports_a_lost_loose_file_as_missing_from_the_index(store: Store, tmp_path: Path) -> None:
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "big").write_bytes(os.urandom(PACK_LIMIT))
    tree = tree_from_directory(store, tmp_path / "tree")
    store.set_ref("kept", tree)
    blob = store.get_document(tree, TreeObject).entries[0].digest
    _backend(store).loose_path(blob.hex).unlink()
    report = fsck(store)
    assert report.status is FsckStatus.MISSING
    assert blob in report.missing and "index" in report.missing[blob]


def _write_same_objects(root: str) -> list[Digest]:
    store = Store(root)
    return [store.put_bytes(str(i).encode() * 1000) for i in range(200)] + [store.put_bytes(b"x" * PACK_LIMIT)]


def test_several_processes_writing_the_same_objects_agree(tmp_path: Path) -> None:
    """Writers start from a fork server: a child forked from this test process inherits the SQLite state of every
    store the earlier tests left open, and then failed about one run in ten (disk I/O error, or rows lost)."""
    root = str(tmp_path / "shared")
    Store(root)
    with ProcessPoolExecutor(max_workers=4, mp_context=multiprocessing.get_context("forkserver")) as pool:
        results = list(pool.map(_write_same_objects, [root] * 4))
    assert all(result == results[0] for result in results)
    store = Store(root)
    assert fsck(store).status is FsckStatus.CLEAN
    assert sum(1 for _ in store.digests()) == 201


# The writer announces when it is halfway through the ingest (loose files linked, packed rows written but not
# committed) and waits there, so the kill lands mid-write on a fast machine as on a slow one.
INGEST = """
import sys, time
from pathlib import Path
from bench.store import Store, tree_from_directory

class Announcing(Store):
    written = 0
    def put_bytes(self, data, **kwargs):
        digest = super().put_bytes(data, **kwargs)
        self.written += 1
        if self.written == 1000:
            print("halfway", flush=True)
            time.sleep(60)
        return digest

tree_from_directory(Announcing(sys.argv[1]), Path(sys.argv[2]))
"""


def test_a_writer_killed_mid_ingest_leaves_no_partial_object(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for index in range(2000):
        (source / f"f{index:04}.txt").write_bytes(os.urandom(2000))
    for index in range(16):
        (source / f"big{index}.bin").write_bytes(os.urandom(16 * PACK_LIMIT))
    root = tmp_path / "store"
    with subprocess.Popen([sys.executable, "-c", INGEST, str(root), str(source)], stdout=subprocess.PIPE) as writer:
        assert writer.stdout is not None and writer.stdout.readline() == b"halfway\n"
        writer.send_signal(signal.SIGKILL)
    assert writer.returncode == -signal.SIGKILL

    store = Store(root)
    visible = {digest.hex for digest in store.digests()}
    loose_files = {path.name for path in (root / "objects").glob("??/*")}
    assert not visible, "the ingest is one transaction: nothing of it may be visible"
    assert len(loose_files) == 16, "the large files were linked in before the kill"
    report = fsck(store)
    assert report.status is FsckStatus.CLEAN, (report.corrupt, report.missing)
    assert report.stale_temporaries == 16, "linked but never recorded"
    for digest in store.digests():
        store.get_bytes(digest)  # every visible object is whole
    # Bytes linked but never recorded stay invisible, and gc sweeps them.
    assert gc(store, grace_seconds=0).temporaries_removed == 16
    assert not list((root / "objects").glob("??/*"))
