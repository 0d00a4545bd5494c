"""Claims on action keys: one worker computes a key, the others wait for its result, and a dead holder's claim is
taken over (its process visibly gone, or its heartbeat stopped). Against a real SQLite store directory; the
store contract checks the compare-and-set underneath on every backend."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bench.contracts import Digest
from bench.errors import StoreCorrupt, StoreError
from bench.store import Store, claims
from bench.store.claims import Claim, claim_key


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "store")


class _Said(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def said() -> Iterator[list[str]]:
    """What the claims module says (a handler on its own logger: another test may stop bench.* propagating)."""
    logger, handler = logging.getLogger(claims.__name__), _Said()
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    yield handler.lines
    logger.removeHandler(handler)
    logger.setLevel(level)


KEY = Digest.of(b"an action key")


def _dead_claim() -> Claim:
    """A claim naming a process of this machine that has ended."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return Claim.new().model_copy(update={"pid": process.pid, "token": "dead"})


def test_the_first_worker_computes_and_a_second_takes_its_answer(store: Store) -> None:
    answer: list[str] = []
    holding, done = threading.Event(), threading.Event()
    seen: list[str | None] = []

    def holder() -> None:
        with claim_key(store, KEY, lambda: answer[0] if answer else None, "the work") as found:
            assert found is None
            holding.set()
            done.wait()
            answer.append("computed")

    first = threading.Thread(target=holder)
    first.start()
    holding.wait()
    assert Claim.parse(store.backend.claimant(KEY) or b"") is not None

    def waiter() -> None:
        with claim_key(store, KEY, lambda: answer[0] if answer else None, "the work") as found:
            seen.append(found)

    second = threading.Thread(target=waiter)
    second.start()
    done.set()
    first.join()
    second.join()
    assert seen == ["computed"], "the waiter took the holder's answer and computed nothing"
    assert store.backend.claimant(KEY) is None


def test_a_released_claim_goes_to_a_waiter_which_computes(store: Store) -> None:
    holding = threading.Event()
    release = threading.Event()
    computed: list[str] = []

    def holder() -> None:
        with pytest.raises(RuntimeError), claim_key(store, KEY, lambda: None, "the work"):
            holding.set()
            release.wait()
            raise RuntimeError("the holder's run failed")

    first = threading.Thread(target=holder)
    first.start()
    holding.wait()
    second = threading.Thread(target=lambda: _compute(store, computed))
    second.start()
    release.set()
    first.join()
    second.join()
    assert computed == ["by the waiter"]


def _compute(store: Store, computed: list[str]) -> None:
    with claim_key(store, KEY, lambda: None, "the work") as found:
        assert found is None
        computed.append("by the waiter")


def test_the_claim_of_a_dead_process_is_taken_over_at_once(store: Store, said: list[str]) -> None:
    dead = _dead_claim()
    assert store.backend.swap_claim(KEY, None, dead.encode())
    with claim_key(store, KEY, lambda: None, "w") as found:
        assert found is None
        holder = Claim.parse(store.backend.claimant(KEY) or b"")
        assert holder is not None and holder.token != "dead"
    assert said == [f"w: took over from a dead worker ({dead.describe()})"]


def test_a_claim_whose_heartbeat_stopped_is_taken_over(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = Claim.new().model_copy(update={"site": "another machine", "token": "silent"})
    assert not elsewhere.gone(), "another machine's process cannot be judged from here"
    assert store.backend.swap_claim(KEY, None, elsewhere.encode())
    monkeypatch.setattr(claims, "STALE_AFTER", 0.3)
    with claim_key(store, KEY, lambda: None, "the work") as found:
        assert found is None
        assert store.backend.claimant(KEY) != elsewhere.encode()


def test_a_live_holder_is_renewed_and_never_taken_over(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claims, "HEARTBEAT", 0.05)
    with claim_key(store, KEY, lambda: None, "the work") as found:
        assert found is None
        first = Claim.parse(store.backend.claimant(KEY) or b"")
        assert first is not None and first.beat == 0
        now = first
        while now.beat == first.beat:  # the heartbeat moves it; a lapsed one would hang the test, not pass it
            threading.Event().wait(0.05)
            now = Claim.parse(store.backend.claimant(KEY) or b"") or first
        assert now.token == first.token
    assert store.backend.claimant(KEY) is None


def _damage_header(root: Path) -> Callable[[], None]:
    """Overwrite the index's header; the returned call puts it back."""
    index = root / "index.sqlite"
    with contextlib.closing(sqlite3.connect(index)) as db:  # else a connection may read page 1 from the WAL
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    header = index.read_bytes()[:100]
    with index.open("r+b") as file:
        file.write(b"this is no database header" * 4)

    def mend() -> None:
        with index.open("r+b") as file:
            file.write(header)

    return mend


def _unplug(root: Path) -> Callable[[], None]:
    """Take the store directory away, as a disk that went; the returned call plugs it back."""
    away = root.with_name("unplugged")
    root.rename(away)
    return lambda: away.rename(root)


@pytest.mark.parametrize(
    ("fault", "family"), [(_damage_header, StoreCorrupt), (_unplug, StoreError)], ids=["damaged header", "unplugged"]
)
def test_a_store_error_the_heartbeat_meets_is_raised_by_the_holder_not_printed_by_its_thread(
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    fault: Callable[[Path], Callable[[], None]],
    family: type[StoreError],
) -> None:
    """The heartbeat meets the fault first (it breaks the store just before its first renewal, whose thread then
    opens its own connection, as under load in a run); the store is mended before the holder releases the claim,
    so only the heartbeat can have told the holder."""
    died: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", died.append)
    monkeypatch.setattr(claims, "HEARTBEAT", 0.01)
    root, swap, mends = Path(store.backend.location), store.backend.swap_claim, []

    def swap_claim(key: Digest, old: bytes | None, new: bytes | None) -> bool:
        if threading.current_thread().name.startswith("claim-") and not mends:
            mends.append(fault(root))
        return swap(key, old, new)

    monkeypatch.setattr(store.backend, "swap_claim", swap_claim)
    with pytest.raises(family) as raised, claim_key(store, KEY, lambda: None, "the work") as found:
        assert found is None
        (beating,) = [thread for thread in threading.enumerate() if thread.name.startswith("claim-")]
        beating.join(60)  # a hang guard: the renewal that meets the fault ends the heartbeat
        assert not beating.is_alive()
        mends.pop()()
    assert str(root) in str(raised.value)
    assert died == []  # no thread's traceback
    monkeypatch.undo()  # the real swap again: the claim the refused renewal left is still this holder's
    holder = Claim.parse(store.backend.claimant(KEY) or b"")
    assert holder is not None and not holder.gone()


def test_a_waiter_names_the_holder_once(store: Store, said: list[str]) -> None:
    holder = Claim.new().model_copy(update={"token": "live"})  # this very process: alive
    assert store.backend.swap_claim(KEY, None, holder.encode())
    asked = iter([None, None, None, "done"])
    with claim_key(store, KEY, lambda: next(asked), "w") as found:
        assert found == "done"
    assert said == [f"w: waiting for the worker computing it ({holder.describe()})"]
