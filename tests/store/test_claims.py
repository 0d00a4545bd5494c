"""Claims on action keys: one worker computes a key, the others wait for its result, and a dead holder's claim is
taken over (its process visibly gone, or its heartbeat stopped). Against a real SQLite store directory; the
store contract checks the compare-and-set underneath on every backend."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.contracts import Digest
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


def test_a_waiter_names_the_holder_once(store: Store, said: list[str]) -> None:
    holder = Claim.new().model_copy(update={"token": "live"})  # this very process: alive
    assert store.backend.swap_claim(KEY, None, holder.encode())
    asked = iter([None, None, None, "done"])
    with claim_key(store, KEY, lambda: next(asked), "w") as found:
        assert found == "done"
    assert said == [f"w: waiting for the worker computing it ({holder.describe()})"]
