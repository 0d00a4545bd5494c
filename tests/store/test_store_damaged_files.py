"""A damaged pack or loose file of a store directory is a refusal naming it, never a traceback (issues 17, 18).

The packs' reads and writes are inside the backend's boundary (``bench/store/backends/sqlite_errors.py``), as
its SQL is: a pack cut short or altered reads back as bytes that fail their hash (corrupt, never missing), a file
that is no longer one is the store's corruption (exit 3), a pack that cannot be written is a store error and
leaves nothing stored. Real files, a real SQLite index, and a real file size limit for the write.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bench.cli import main
from bench.contracts import BlobDigest, Digest
from bench.errors import ObjectCorrupt, StoreCorrupt
from bench.store import PACK_LIMIT, Store
from bench.store.backends import INLINE_LIMIT, SqliteBackend
from bench.store.backends.packs import pack_names, pack_path
from bench.store.fsck import FsckStatus, fsck

SIZES = [INLINE_LIMIT * 4 + index for index in range(6)]


def _packed(root: Path) -> tuple[Store, list[BlobDigest], Path]:
    """A store whose six objects lie in one pack, back to back in the order given."""
    store = Store(root)
    digests = store.put_many([os.urandom(size) for size in SIZES])
    (name,) = pack_names(root / "packs")
    return store, digests, pack_path(root / "packs", name)


def _json_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, dict[str, object]]:
    code = main(argv)
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 1 and "Traceback" not in captured.err, captured.out + captured.err
    return code, json.loads(captured.out)


@pytest.mark.parametrize("damage", ["cut", "altered"])
def test_a_pack_cut_short_or_altered_is_corrupt_never_missing(tmp_path: Path, damage: str) -> None:
    store, digests, pack = _packed(tmp_path / "store")
    data = bytearray(pack.read_bytes())
    middle = len(data) // 2
    if damage == "cut":
        pack.write_bytes(bytes(data[:middle]))
    else:
        data[middle] ^= 0xFF
        pack.write_bytes(bytes(data))
    ends = [sum(SIZES[: index + 1]) for index in range(len(SIZES))]
    hit = {
        digest
        for digest, start, end in zip(digests, [0, *ends], ends, strict=False)
        if end > middle and (damage == "cut" or start <= middle)
    }
    assert hit and len(hit) < len(digests)
    for digest in digests:
        if digest in hit:
            with pytest.raises(ObjectCorrupt):
                store.get_bytes(digest)
        else:
            assert len(store.get_bytes(digest)) == digest.size
    with pytest.raises(ObjectCorrupt) as refused:  # read together with its neighbours, still re-hashed
        list(store.get_unordered(digests))
    assert refused.value.args and any(digest.hex in str(refused.value) for digest in hit)
    unhurt = [digest for digest in digests if digest not in hit]
    assert {digest: len(data) for digest, data in store.get_unordered(unhurt)} == {d: d.size for d in unhurt}
    report = fsck(store)
    assert (report.status, set(report.corrupt), report.missing) == (FsckStatus.CORRUPT, hit, {})


@pytest.mark.parametrize("kind", ["pack", "loose"])
def test_a_store_file_that_is_no_longer_a_file_is_a_corruption_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    root = tmp_path / "store"
    if kind == "pack":
        store, digests, damaged = _packed(root)
        digest: Digest = digests[0]
    else:
        store = Store(root)
        digest = store.put_bytes(os.urandom(PACK_LIMIT))
        assert isinstance(store.backend, SqliteBackend)
        damaged = store.backend.loose_path(digest.hex)
    damaged.unlink()
    damaged.mkdir()  # what is there is no longer the file the store wrote
    with pytest.raises(StoreCorrupt) as refused:
        store.get_bytes(digest)
    assert refused.value.path == str(damaged) and str(damaged) in str(refused.value)
    code, answer = _json_line(capsys, ["--store", str(root), "--json", "store", "cat", str(digest)])
    error = answer["error"]
    assert isinstance(error, dict)
    assert (code, error["code"], error["path"]) == (3, "store-corrupt", str(damaged))
    code, answer = _json_line(capsys, ["--store", str(root), "--json", "store", "fsck"])
    assert (code, answer["status"]) == (3, "corrupt")


def _file_size_limit(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG, as on a full disk
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_pack_that_cannot_be_written_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    source = tmp_path / "tree"
    source.mkdir()
    files = [os.urandom(1 << 20) for _ in range(4)]
    for number, data in enumerate(files):
        (source / f"file{number}").write_bytes(data)
    root = tmp_path / "store"
    Store(root)  # the index exists before the limit applies
    ran = subprocess.run(
        [sys.executable, "-m", "bench", "--store", str(root), "--json", "store", "put", str(source)],
        capture_output=True,
        text=True,
        preexec_fn=lambda: _file_size_limit(2 << 20),
        timeout=120,
    )
    assert "Traceback" not in ran.stderr and len(ran.stdout.splitlines()) == 1, ran.stdout + ran.stderr
    error = json.loads(ran.stdout)["error"]
    assert (ran.returncode, error["code"]) == (74, "system-refused"), error  # the system refused, as a full disk
    assert "/packs/" in error["path"] and "File too large" in error["message"]
    store = Store(root)
    assert not any(store.has(Digest.of(data)) for data in files)
    assert pack_names(root / "packs") == []  # the transaction's pack went with its rollback
