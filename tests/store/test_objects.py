from __future__ import annotations

import os
import signal
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from bench.contracts import Digest
from bench.errors import ObjectCorrupt, ObjectMissing
from bench.store import PACK_LIMIT, Store, TreeObject
from bench.store.fsck import FsckStatus, fsck
from bench.store.gc import gc


def test_bytes_round_trip_packed_and_loose(store: Store) -> None:
    small, large = b"small object", os.urandom(PACK_LIMIT + 1)
    for data in (small, large, b""):
        digest = store.put_bytes(data)
        assert digest == Digest.of(data)
        assert store.get_bytes(digest) == data
    assert store.loose_path(Digest.of(large).hex).is_file()
    assert not store.loose_path(Digest.of(small).hex).exists()


def test_a_missing_object_is_an_error_naming_it(store: Store) -> None:
    absent = Digest.of(b"never stored")
    with pytest.raises(ObjectMissing, match=absent.hex):
        store.get_bytes(absent)


def _flip_packed_byte(store: Store, digest: Digest) -> None:
    connection = store.db.connection
    (data,) = connection.execute("SELECT data FROM objects WHERE hex = ?", (digest.hex,)).fetchone()
    flipped = bytes([data[0] ^ 1]) + bytes(data[1:])
    connection.execute("UPDATE objects SET data = ? WHERE hex = ?", (flipped, digest.hex))


def test_one_flipped_byte_is_named_by_fsck_and_refused_on_read(store: Store) -> None:
    keep = store.put_bytes(b"intact")
    packed = store.put_bytes(b"will be tampered with")
    loose = store.put_bytes(os.urandom(PACK_LIMIT * 2))
    _flip_packed_byte(store, packed)
    path = store.loose_path(loose.hex)
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x80
    path.write_bytes(bytes(raw))

    report = fsck(store)
    assert sorted(report.corrupt) == sorted([packed, loose])
    assert report.status is FsckStatus.CORRUPT
    for digest in (packed, loose):
        with pytest.raises(ObjectCorrupt, match=digest.hex):
            store.get_bytes(digest)
    assert store.get_bytes(keep) == b"intact"


def test_fsck_reports_missing_objects_with_their_referrers(store: Store, tmp_path: Path) -> None:
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "big").write_bytes(os.urandom(PACK_LIMIT))
    from bench.store import tree_from_directory

    tree = tree_from_directory(store, tmp_path / "tree")
    store.set_ref("kept", tree)
    blob = store.get_document(tree, TreeObject).entries[0].digest
    store.loose_path(blob.hex).unlink()
    report = fsck(store)
    assert report.status is FsckStatus.MISSING
    assert blob in report.missing and "index" in report.missing[blob]


def _write_same_objects(root: str) -> list[str]:
    store = Store(root)
    return [store.put_bytes(str(i).encode() * 1000) for i in range(200)] + [store.put_bytes(b"x" * PACK_LIMIT)]


def test_several_processes_writing_the_same_objects_agree(tmp_path: Path) -> None:
    root = str(tmp_path / "shared")
    Store(root)
    with ProcessPoolExecutor(max_workers=4) as pool:
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
    for digest in store.digests():
        store.get_bytes(digest)  # every visible object is whole
    # Bytes linked but never recorded stay invisible, and gc sweeps them.
    assert gc(store, grace_seconds=0).temporaries_removed == 16
    assert not list((root / "objects").glob("??/*"))


def test_get_many_reads_in_the_order_given_and_verifies_each(store: Store) -> None:
    digests = [store.put_bytes(f"object {index}".encode()) for index in range(1200)]
    digests.append(store.put_bytes(os.urandom(PACK_LIMIT)))
    wanted = list(reversed(digests))
    assert [digest for digest, _ in store.get_many(wanted)] == wanted
    assert all(Digest.of(data) == digest for digest, data in store.get_many(wanted))
    _flip_packed_byte(store, digests[700])
    with pytest.raises(ObjectCorrupt, match=digests[700].hex):
        list(store.get_many(digests))
    with pytest.raises(ObjectMissing):
        list(store.get_many([Digest.of(b"never stored")]))
