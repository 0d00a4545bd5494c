"""The store contract on a store directory (SQLite index, packs and loose files), and what only that backend does:
inline rows, packs, loose files, an old store's migration, several processes, a writer killed mid-ingest."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import random
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from store_contract import StoreContract

from bench.contracts import Digest
from bench.store import PACK_LIMIT, Store, TreeObject, tree_from_directory
from bench.store.backends import INLINE_LIMIT, SqliteBackend
from bench.store.backends.packs import pack_names, pack_path
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

    def lose(self, store: Store, digest: Digest) -> None:
        path = _backend(store).loose_path(digest.hex)
        if path.exists():
            path.unlink()  # the index still lists it
            return
        with _index(store) as index:
            index.execute("UPDATE objects SET data = NULL, pack = NULL WHERE hex = ?", (digest.hex,))


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


def test_fsck_reports_a_lost_loose_file_as_missing_from_the_index(store: Store) -> None:
    blob = store.put_bytes(os.urandom(PACK_LIMIT))
    _backend(store).loose_path(blob.hex).unlink()
    report = fsck(store)
    assert report.status is FsckStatus.MISSING
    assert report.missing == {blob: ["index"]}


def test_a_bulk_write_packs_its_larger_objects_into_one_file(store: Store, tmp_path: Path) -> None:
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "big").write_bytes(os.urandom(PACK_LIMIT))
    (tmp_path / "tree" / "medium").write_bytes(os.urandom(INLINE_LIMIT))
    (tmp_path / "tree" / "small").write_bytes(b"x" * (INLINE_LIMIT - 1))
    tree = tree_from_directory(store, tmp_path / "tree")
    entries = {entry.name: entry.digest for entry in store.get_document(tree, TreeObject).entries}
    with _index(store) as index:
        placed = dict(index.execute("SELECT hex, pack IS NOT NULL FROM objects").fetchall())
    assert placed[entries["big"].hex] and placed[entries["medium"].hex] and not placed[entries["small"].hex]
    assert not placed[tree.hex], "a directory object is small: a row"
    assert len(pack_names(_backend(store).packs)) == 1 and not list((_backend(store).root / "objects").glob("??/*"))
    assert store.get_bytes(entries["big"]) == (tmp_path / "tree" / "big").read_bytes()
    pack_path(_backend(store).packs, pack_names(_backend(store).packs)[0]).unlink()
    report = fsck(store)
    assert report.status is FsckStatus.MISSING
    assert set(report.missing) == {entries["big"], entries["medium"]}


def test_a_transaction_reads_its_own_packed_writes_and_a_rollback_removes_its_pack(store: Store) -> None:
    data = [os.urandom(INLINE_LIMIT + index) for index in range(3)]
    with store.batch():
        first = store.put_many(data[:1])[0]
        with pytest.raises(RuntimeError), store.batch():
            undone = store.put_many(data[1:2])[0]
            assert store.get_bytes(undone) == data[1]
            raise RuntimeError
        assert store.get_bytes(first) == data[0] and not store.has(undone)
        kept = store.put_many(data[2:])[0]
    assert [store.get_bytes(digest) for digest in (first, kept)] == [data[0], data[2]]
    (name,) = pack_names(_backend(store).packs)
    assert pack_path(_backend(store).packs, name).stat().st_size == len(data[0]) + len(data[2]), (
        "the savepoint's bytes are cut"
    )
    with pytest.raises(RuntimeError), store.batch():
        store.put_many([os.urandom(INLINE_LIMIT)])
        raise RuntimeError
    assert pack_names(_backend(store).packs) == [name], "a rolled-back transaction leaves no pack"
    assert store.put_many(data) == [first, undone, kept]
    assert len(pack_names(_backend(store).packs)) == 2, "only the object not stored yet was written again"


def test_reading_in_pack_order_returns_what_single_reads_do_across_batches_packs_and_run_limits(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two packs: one of 300 KB objects, so runs are cut at their 1 MiB limit, and one of more small objects than
    # one index query takes. Some objects are left out, so runs also skip over bytes or start again past a gap.
    large = store.put_many([os.urandom(300_000 + 7 * index) for index in range(12)])
    small = store.put_many([os.urandom(INLINE_LIMIT + index) for index in range(1100)])
    assert len(pack_names(_backend(store).packs)) == 2
    wanted = [digest for index, digest in enumerate(small) if index % 7] + large[:4] + large[5:]
    random.Random(18).shuffle(wanted)
    reads: list[int] = []
    pread, preadv = os.pread, os.preadv
    monkeypatch.setattr(os, "pread", lambda fd, size, at: reads.append(size) or pread(fd, size, at))
    monkeypatch.setattr(os, "preadv", lambda fd, into, at: reads.append(sum(map(len, into))) or preadv(fd, into, at))
    found = list(store.get_unordered(wanted))
    monkeypatch.undo()
    assert len(found) == len(wanted) and dict(found) == {digest: store.get_bytes(digest) for digest in wanted}
    assert max(reads) <= 1 << 20 and len(reads) <= 8, "neighbours in a pack are read together, whatever the order asked"


def test_gc_removes_a_pack_once_none_of_its_objects_is_kept(store: Store) -> None:
    kept, dropped = store.put_many([os.urandom(INLINE_LIMIT), os.urandom(INLINE_LIMIT)])
    store.set_ref("kept", kept)
    assert gc(store, grace_seconds=0).deleted == 1
    assert not store.has(dropped) and store.get_bytes(kept) and len(pack_names(_backend(store).packs)) == 1
    store.delete_ref("kept")
    assert gc(store, grace_seconds=0).deleted == 1
    assert pack_names(_backend(store).packs) == []


def test_a_store_made_before_packs_is_migrated_in_place(tmp_path: Path) -> None:
    root = tmp_path / "old"
    root.mkdir()
    small, large = b"an old small object", os.urandom(PACK_LIMIT)
    with contextlib.closing(sqlite3.connect(root / "index.sqlite", isolation_level=None)) as index:
        index.executescript(OLD_SCHEMA)
        for data in (small, large):
            digest = Digest.of(data)
            index.execute(
                "INSERT INTO objects VALUES (?, ?, 0, ?, 0)", (digest.hex, len(data), data if data is small else None)
            )
    (root / "objects" / Digest.of(large).hex[:2]).mkdir(parents=True)
    (root / "objects" / Digest.of(large).hex[:2] / Digest.of(large).hex).write_bytes(large)
    store = Store(root)
    assert store.get_bytes(Digest.of(small)) == small and store.get_bytes(Digest.of(large)) == large
    packed = store.put_many([os.urandom(INLINE_LIMIT)])[0]
    assert Store(root).has(packed) and fsck(Store(root)).status is FsckStatus.CLEAN


OLD_SCHEMA = """
CREATE TABLE objects (hex TEXT PRIMARY KEY, size INTEGER NOT NULL, is_document INTEGER NOT NULL, data BLOB,
                      created REAL NOT NULL);
"""


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


# The writer announces once its first batch is in its pack (a quarter of the big files; no row committed) and
# waits there, so the kill lands mid-write on a fast machine as on a slow one.
INGEST = """
import sys, time
from pathlib import Path
from bench.store import Store, tree_from_directory

class Announcing(Store):
    def put_many(self, datas, **kwargs):
        digests = super().put_many(datas, **kwargs)
        print("halfway", flush=True)
        time.sleep(60)
        return digests

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
    assert not list(store.digests()), "the ingest is one transaction: nothing of it may be visible"
    (pack,) = pack_names(root / "packs")
    assert pack_path(root / "packs", pack).stat().st_size > 0, "the big files were written to the pack before the kill"
    report = fsck(store)
    assert report.status is FsckStatus.CLEAN, (report.corrupt, report.missing)
    assert report.stale_temporaries == 1, "written but never recorded"
    # Bytes written but never recorded stay invisible, and gc sweeps them.
    assert gc(store, grace_seconds=0).temporaries_removed == 1
    assert pack_names(root / "packs") == []
