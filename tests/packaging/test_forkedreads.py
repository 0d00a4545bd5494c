"""Pack objects read in a forked second process (issue 18): the same tree, the same refusals, never a partial tree.

Real repositories packed by git's own repack, real forks and pipes. The fork threshold and the share read in
this process are lowered or moved so that a small repository takes each route; on the forked route the one-thread
rule is lifted too, since other tests' loopback servers may still be serving from threads of this process (the
rule itself is tested with a thread of its own).
"""

from __future__ import annotations

import _thread
import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from dulwich.objects import Blob
from dulwich.repo import Repo

from bench import forking
from bench.errors import SourceError
from bench.packaging import CorpusError, MaterializationReceipt, gitsource, materialize, open_source
from bench.packaging.forkedreads import interleaved, read_forked
from bench.packaging.gitsource import GitSourceCorrupt
from bench.store import Store
from tests.packaging.forks import reaped as _reaped
from tests.packaging.gitrepos import RepoFactory, packed

# Similar files, so git's repack stores most of them as deltas of one another.
FILES = {
    f"pkg{i % 3}/file{i:02}.txt": b"".join(b"line %d of a shared text\n" % n for n in range(40 + i)) for i in range(30)
}


def _route(monkeypatch: pytest.MonkeyPatch, *, forked: bool, own_share: float = 0.0) -> None:
    monkeypatch.setattr(gitsource, "FORK_MIN_OBJECTS", 1 if forked else 10**9)
    monkeypatch.setattr(gitsource, "OWN_SHARE", own_share)
    if forked:
        monkeypatch.setattr(gitsource, "fork_is_safe", lambda: True)


def _materialized(store: Store, repo: Path, commit: str) -> MaterializationReceipt:
    with open_source(str(repo)) as source:
        return materialize(store, source, commit)


@pytest.mark.parametrize("own_share", [0.0, 0.25, 1.0])
def test_a_forked_read_stores_the_same_tree_and_receipt(
    make_repo: RepoFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: list[int], own_share: float
) -> None:
    repo, commit = make_repo(FILES)
    packed(repo)
    _route(monkeypatch, forked=False)
    alone = _materialized(Store(tmp_path / "alone"), repo, commit)
    assert forks == []
    _route(monkeypatch, forked=True, own_share=own_share)
    forked = _materialized(Store(tmp_path / "forked"), repo, commit)
    assert len(forks) == 1 and _reaped(forks[0])
    assert forked == alone and forked.files == len(FILES)


def test_a_process_running_another_thread_reads_every_object_itself(
    make_repo: RepoFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: list[int]
) -> None:
    repo, commit = make_repo(FILES)
    packed(repo)
    _route(monkeypatch, forked=False)
    alone = _materialized(Store(tmp_path / "alone"), repo, commit)
    monkeypatch.setattr(gitsource, "FORK_MIN_OBJECTS", 1)  # the threshold met; the thread below is what stops it
    release = threading.Event()
    other = threading.Thread(target=release.wait, name="holds-a-lock-maybe")
    other.start()
    try:
        assert not forking.fork_is_safe()
        threaded = _materialized(Store(tmp_path / "threaded"), repo, commit)
    finally:
        release.set()
        other.join()
    assert forks == [], "a process running a second thread was forked"
    assert threaded == alone and threaded.files == len(FILES)


def test_a_thread_python_does_not_count_still_stops_the_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread started by native code (a Ray or gRPC client's) is not in Python's count, which is made to say
    one here; the kernel's count of this process's threads still sees the one started below ``threading``."""
    started, release = threading.Event(), threading.Lock()
    release.acquire()

    def hold() -> None:
        started.set()
        with release:
            pass

    _thread.start_new_thread(hold, ())
    started.wait()
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    try:
        assert len(os.listdir("/proc/self/task")) > 1
        assert not forking.fork_is_safe()
    finally:
        release.release()


def _flipped(repo: Path, data: bytes) -> str:
    """Damage the deflated bytes of the blob ``data`` in the repository's pack; its id."""
    pack, _ = packed(repo)
    sha = Blob.from_string(data).id
    with Repo(str(repo)) as handle:
        offset = next(iter(handle.object_store.packs)).index.object_offset(sha)
    damaged = bytearray(pack.read_bytes())
    damaged[offset + 6] ^= 0xFF
    pack.chmod(0o644)
    pack.write_bytes(bytes(damaged))
    return sha.decode()


def test_a_damaged_object_read_by_the_forked_reader_is_refused_with_the_same_message(
    make_repo: RepoFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: list[int]
) -> None:
    files = {**FILES, "src/alpha.txt": b"alpha, a file like no other\n" * 50}
    repo, commit = make_repo(files)
    sha = _flipped(repo, files["src/alpha.txt"])
    refusals = []
    for forked in (False, True):
        _route(monkeypatch, forked=forked)
        store = Store(tmp_path / f"store-{forked}")
        with pytest.raises(GitSourceCorrupt) as refused:
            _materialized(store, repo, commit)
        refusals.append((str(refused.value), refused.value.hint))
        assert list(store.digests()) == []  # nothing of the tree was stored
    assert len(forks) == 1 and _reaped(forks[0])
    assert refusals[0] == refusals[1]
    assert f"object {sha} (src/alpha.txt) cannot be read" in refusals[0][0] and str(repo) in refusals[0][0]


def _dying(how: str) -> Callable[[bytes, int, bytes], None]:
    """A name check that ends the process it runs in, unless that is this one (the forked reader dies)."""
    parent, check = os.getpid(), gitsource._check_name

    def checked(sha: bytes, type_num: int, data: bytes) -> None:
        if os.getpid() != parent:
            if how == "exit":
                os._exit(7)
            os.kill(os.getpid(), signal.SIGKILL)
        check(sha, type_num, data)

    return checked


@pytest.mark.parametrize(("how", "said"), [("exit", "exit status 7"), ("kill", "killed by signal 9")])
def test_a_reader_that_dies_is_an_error_naming_how_and_nothing_is_stored(
    make_repo: RepoFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forks: list[int],
    how: str,
    said: str,
) -> None:
    repo, commit = make_repo(FILES)
    packed(repo)
    _route(monkeypatch, forked=True, own_share=0.25)
    monkeypatch.setattr(gitsource, "_check_name", _dying(how))
    store = Store(tmp_path / "store")
    with pytest.raises(SourceError, match=rf"stopped before sending them all \({said}\)") as refused:
        _materialized(store, repo, commit)
    assert str(repo) in str(refused.value) and "\n" not in str(refused.value)
    assert list(store.digests()) == []
    assert len(forks) == 1 and _reaped(forks[0])


def _numbers(count: int) -> Iterator[tuple[bytes, tuple[int, bytes] | None]]:
    for number in range(count):
        yield str(number).encode(), (3, b"x" * (number % 100))


def test_a_consumer_that_stops_early_stops_and_reaps_the_reader(forks: list[int]) -> None:
    keys = [str(number).encode() for number in range(100_000)]
    stream = read_forked("repo", keys, lambda: _numbers(len(keys)))
    assert next(stream) == (b"0", (3, b""))
    stream.close()
    assert len(forks) == 1 and _reaped(forks[0])


def test_a_failure_on_this_side_stops_and_reaps_the_reader(forks: list[int]) -> None:
    def failing() -> Iterator[tuple[bytes, tuple[int, bytes] | None]]:
        yield b"mine", None
        raise SourceError("refused here")

    keys = [str(number).encode() for number in range(100_000)]
    mixed = interleaved(read_forked("repo", keys, lambda: _numbers(len(keys))), failing(), len(keys), 2)
    with pytest.raises(SourceError, match="refused here"):
        list(mixed)
    assert len(forks) == 1 and _reaped(forks[0])


def test_the_reader_sends_what_it_read_in_order_then_exits_cleanly(forks: list[int]) -> None:
    keys = [str(number).encode() for number in range(3_000)]
    mine = [(b"own%d" % number, None) for number in range(1_000)]
    mixed = list(interleaved(read_forked("repo", keys, lambda: _numbers(len(keys))), iter(mine), len(keys), len(mine)))
    assert [item for item in mixed if item[1] is not None] == list(_numbers(len(keys)))
    assert [item for item in mixed if item[1] is None] == mine
    assert mixed[:4] == [(b"0", (3, b"")), (b"own0", None), (b"1", (3, b"x")), (b"2", (3, b"xx"))]
    assert len(forks) == 1 and _reaped(forks[0])


def test_a_refusal_that_cannot_be_rebuilt_here_crosses_as_its_one_line_account(forks: list[int]) -> None:
    def refusing() -> Iterator[tuple[bytes, tuple[int, bytes] | None]]:
        yield b"a", None
        raise CorpusError("x/y", "is odd")  # pickles, but its constructor takes two arguments, not its message

    with pytest.raises(SourceError) as refused:
        list(read_forked("repo", [b"a", b"b"], refusing))
    assert type(refused.value) is SourceError
    assert str(refused.value) == "reading git objects failed: CorpusError: x/y: is odd"
    assert len(forks) == 1 and _reaped(forks[0])
