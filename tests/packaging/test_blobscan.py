"""Certify's files scanned partly in a forked process (issue 18): the same report, the same refusals, never a
partial one.

A real SQLite store with packs, real forks and pipes. The fork threshold is lowered (or raised) so that a small
tree takes each route, and the share scanned by the forked process is moved so that a finding or a damaged file
lies in its share; on the forked route the one-thread rule is lifted too, since other tests' loopback servers may
still be serving from threads of this process (the rule itself is tested with a thread of its own).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bench import forking
from bench.contracts import Digest
from bench.errors import ObjectCorrupt, ObjectMissing, StoreError
from bench.packaging import CertificationReport, CertifyInputs, CertifyParams, blobscan, certify_surfaces
from bench.packaging.markers import Hit, TextScanner
from bench.store import Store
from bench.store.backends import MemoryBackend, SqliteBackend
from bench.store.backends.packs import pack_path
from bench.store.backends.s3 import S3Backend
from tests.packaging.forks import another_thread, reaped
from tests.packaging.test_certify import _typed

PLANTED = {"pkg0/file0007.txt", "pkg3/file0500.txt", "pkg6/file1196.txt"}  # early, middle and late in the walk


def _source() -> dict[str, bytes]:
    """More files than the fork threshold as lowered, a few holding a marker, two sharing one blob."""
    source = {f"pkg{index % 7}/file{index:04}.txt": f"{index}\n".encode() * 300 for index in range(1200)}
    for path in PLANTED:
        source[path] += b"tuned for stele-bench\n"
    source["copy/of/file0007.txt"] = source["pkg0/file0007.txt"]
    return source


def _route(monkeypatch: pytest.MonkeyPatch, *, forked: bool, share: float = 0.5) -> None:
    monkeypatch.setattr(blobscan, "FORK_MIN_BLOBS", 100 if forked else 10**9)  # the source only, not the evidence
    monkeypatch.setattr(blobscan, "FORKED_SHARE", share)
    if forked:
        monkeypatch.setattr(blobscan, "fork_is_safe", lambda: True)


def _certified(store: Store, inputs: CertifyInputs) -> CertificationReport:
    return certify_surfaces(store, inputs, CertifyParams(memory_phrases=()))


@pytest.mark.parametrize("backend", ["sqlite", "memory"])
@pytest.mark.parametrize("share", [0.5, 1.0])
def test_a_forked_scan_reports_what_one_process_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: list[int], share: float, backend: str
) -> None:
    store = Store(tmp_path / "store") if backend == "sqlite" else Store.in_memory()
    inputs = _typed(store, _source())
    _route(monkeypatch, forked=False)
    alone = _certified(store, inputs)
    assert forks == []
    _route(monkeypatch, forked=True, share=share)  # at 1.0 every finding is one the forked process made
    forked = _certified(store, inputs)
    assert len(forks) == 1 and reaped(forks[0])
    assert forked == alone
    found = {(f.path, f.marker) for f in forked.findings if f.surface == "source"}
    assert found == {(path, "stele-bench") for path in PLANTED | {"copy/of/file0007.txt"}}
    assert forked.surfaces[0].scanned_bytes == sum({Digest.of(d): len(d) for d in _source().values()}.values())


def test_a_process_running_another_thread_scans_every_file_itself(
    store: Store, monkeypatch: pytest.MonkeyPatch, forks: list[int]
) -> None:
    inputs = _typed(store, _source())
    _route(monkeypatch, forked=False)
    alone = _certified(store, inputs)
    monkeypatch.setattr(blobscan, "FORK_MIN_BLOBS", 100)  # the threshold met; the thread below is what stops it
    with another_thread():
        assert not forking.fork_is_safe()
        threaded = _certified(store, inputs)
    assert forks == [], "a process running a second thread was forked"
    assert threaded == alone


def _damaged(store: Store, victim: Digest, damage: str) -> None:
    """A packed blob altered inside its pack, or its row gone from the index."""
    index = sqlite3.connect(store.backend.root / "index.sqlite")  # type: ignore[attr-defined]
    with contextlib.closing(index), index:
        if damage == "missing":
            index.execute("DELETE FROM objects WHERE hex = ?", (victim.hex,))
            return
        pack, offset = index.execute("SELECT pack, pack_offset FROM objects WHERE hex = ?", (victim.hex,)).fetchone()
    with pack_path(store.backend.packs, pack).open("r+b") as file:  # type: ignore[attr-defined]
        file.seek(offset + 100)
        file.write(b"#")


@pytest.mark.parametrize(("damage", "refusal"), [("corrupt", ObjectCorrupt), ("missing", ObjectMissing)])
@pytest.mark.parametrize(("share", "found_by"), [(1.0, "the forked process"), (0.0, "this process")])
def test_a_damaged_file_is_refused_with_the_same_error_whichever_process_reads_it(
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    forks: list[int],
    damage: str,
    refusal: type[Exception],
    share: float,
    found_by: str,
) -> None:
    """Found by the forked process, the refusal crosses as it is; found here, the forked process is stopped."""
    source = _source()
    inputs = _typed(store, source)
    victim = Digest.of(source["pkg4/file0200.txt"])
    _damaged(store, victim, damage)
    refusals = []
    for forked in (False, True):
        _route(monkeypatch, forked=forked, share=share)
        with pytest.raises(refusal) as refused:
            _certified(store, inputs)
        refusals.append((type(refused.value), str(refused.value), refused.value.details()))  # type: ignore[attr-defined]
    assert len(forks) == 1 and reaped(forks[0]), found_by
    assert refusals[0] == refusals[1]
    assert victim.hex in refusals[0][1]


def _dying(how: str) -> Callable[[TextScanner, bytes], Iterator[Hit]]:
    """A scan that ends the process it runs in, unless that is this one (the forked process dies)."""
    parent, scan = os.getpid(), TextScanner.scan

    def scanned(self: TextScanner, data: bytes) -> Iterator[Hit]:
        if os.getpid() != parent:
            if how == "exit":
                os._exit(7)
            os.kill(os.getpid(), signal.SIGKILL)
        return scan(self, data)

    return scanned


@pytest.mark.parametrize(("how", "said"), [("exit", "exit status 7"), ("kill", "killed by signal 9")])
def test_a_forked_process_that_dies_is_an_error_naming_how(
    store: Store, monkeypatch: pytest.MonkeyPatch, forks: list[int], how: str, said: str
) -> None:
    inputs = _typed(store, _source())
    _route(monkeypatch, forked=True)
    monkeypatch.setattr(TextScanner, "scan", _dying(how))
    with pytest.raises(StoreError, match=rf"stopped before sending what it found \({said}\)") as refused:
        _certified(store, inputs)
    assert str(refused.value).startswith("certify source: the process scanning 600 of its files") and "\n" not in str(
        refused.value
    )
    assert len(forks) == 1 and reaped(forks[0])


def test_each_backend_says_how_a_forked_process_reopens_it(tmp_path: Path) -> None:
    sqlite = SqliteBackend(tmp_path / "store")
    digest = Store(sqlite).put_bytes(b"kept")
    reopen = sqlite.reopener()
    assert reopen is not None
    reopened = reopen()
    assert reopened is not sqlite and isinstance(reopened, SqliteBackend)
    assert reopened.location == sqlite.location and reopened.get(digest) == b"kept"
    with sqlite.transaction():  # its connection would stay open across a fork
        assert sqlite.reopener() is None
    memory = MemoryBackend()
    reopen = memory.reopener()
    assert reopen is not None and reopen() is memory  # a forked process reads its copy of the dicts
    assert S3Backend("bucket", "prefix").reopener() is None  # a bucket is scanned by this process alone
    store = Store(sqlite)
    reopen_store = store.reopener()
    assert reopen_store is not None and reopen_store().get_bytes(digest) == b"kept"
    assert Store(S3Backend("bucket")).reopener() is None
