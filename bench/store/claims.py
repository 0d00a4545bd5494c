"""Claims: who computes an action key now, so that a key is computed once however many workers ask for it.

A worker about to run an action claims its key (:func:`claim_key`): a compare-and-set in the store
(:meth:`~bench.store.backends.base.StoreBackend.swap_claim`) that one worker wins, on every backend alike. The
others wait, each saying once whom for, until one of:

- the key has a result: they take it (a second result would be refused anyway: a key has one);
- the claim is released (its holder's run failed): one of them claims the key next;
- the holder is dead: one of them takes the claim over. A holder is dead when its process is visibly gone (the
  same machine boot and pid namespace, and its pid free or another process's), or when its heartbeat stopped:
  a holder renews its claim every :data:`HEARTBEAT` seconds, and a claim a waiter has seen unchanged for
  :data:`STALE_AFTER` seconds of the waiter's own clock is taken over (no two machines' clocks are compared).

A claim names its holder (host, pid, when it claimed), so a wait is one line naming it. What a claim holds is
the bytes of a :class:`Claim`; the backends keep them as opaque bytes.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import TypeVar

from ..contracts import ContractModel, Digest, canonical_bytes
from ..contracts.files import parse_contract
from ..errors import BenchError, ContractError
from ..processes import ProcessIdentity
from .store import Store

__all__ = ["HEARTBEAT", "STALE_AFTER", "Claim", "claim_key"]

T = TypeVar("T")
HEARTBEAT = 5.0  # seconds between a holder's renewals
STALE_AFTER = 60.0  # a claim unrenewed this long (by the waiter's clock) is its dead holder's
_FIRST_POLL, _LAST_POLL = 0.05, 2.0  # a waiter asks again after this long, doubling up to the last
_log = logging.getLogger(__name__)


class Claim(ContractModel):
    """What a claim holds: who computes the key, and a count its heartbeat moves."""

    host: str
    pid: int
    start: str | None  # the process's start time (bench.processes): a reused pid is no holder
    site: str
    token: str  # this claim's own name: two claims of one process differ
    since: float  # when it was claimed (time.time(), for people)
    beat: int = 0

    @classmethod
    def new(cls) -> Claim:
        me = ProcessIdentity.current()
        return cls(
            host=me.host, pid=me.pid, start=me.start, site=me.site, token=secrets.token_hex(8), since=time.time()
        )

    @classmethod
    def parse(cls, data: bytes) -> Claim | None:
        """The claim ``data`` holds; None for bytes that are no claim (judged by their heartbeat alone)."""
        try:
            return parse_contract(data, cls, "a claim")
        except ContractError:
            return None

    def encode(self) -> bytes:
        return canonical_bytes(self)

    def describe(self) -> str:
        when = datetime.fromtimestamp(self.since, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        return f"pid {self.pid} on {self.host}, since {when}"

    def gone(self) -> bool:
        return ProcessIdentity(self.host, self.pid, self.start, self.site).gone()


class _Heartbeat:
    """Renews a held claim every HEARTBEAT seconds until stopped, then releases it.

    A store error a renewal meets (a damaged index, a full disk, the store gone) ends the heartbeat and is kept, so
    the holder raises it, family and message intact, when it releases the claim: raised in this thread it would be
    a thread's traceback on stderr and lost to the stage, which would then fail on its own later error or not at all.
    """

    def __init__(self, store: Store, key: Digest, claim: Claim) -> None:
        self.store, self.key, self.claim = store, key, claim
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._failure: BenchError | None = None
        self._thread = threading.Thread(target=self._beat, name=f"claim-{claim.token}", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT):
            with self._lock:
                renewed = self.claim.model_copy(update={"beat": self.claim.beat + 1})
                try:
                    held = self.store.backend.swap_claim(self.key, self.claim.encode(), renewed.encode())
                except BenchError as exc:
                    self._failure = exc
                    return
                if not held:
                    _log.warning("the claim on %s was taken over: another worker judged this one dead", self.key)
                    return
                self.claim = renewed

    def release(self) -> None:
        """Stop renewing and release the claim; raises the store error a renewal met (the claim is then left to
        the waiters' dead-holder rule: the store just refused a write)."""
        self._stop.set()
        self._thread.join()
        with self._lock:
            if self._failure is not None:
                raise self._failure
            self.store.backend.swap_claim(self.key, self.claim.encode(), None)  # False: it was taken over


@contextlib.contextmanager
def claim_key(store: Store, key: Digest, finished: Callable[[], T | None], what: str) -> Iterator[T | None]:
    """Hold the claim on ``key`` for the block, which computes it (yields None); or, when ``finished`` answers
    while this worker waits or once it holds the claim, yield that answer without computing. ``what`` names
    the work in the line a wait says."""
    mine = Claim.new()
    taken = _take(store, key, mine, finished, what)
    if taken is not None:
        yield taken
        return
    beating = _Heartbeat(store, key, mine)
    try:
        # Asked again now: a worker may have recorded the key and released it just before this one claimed it.
        yield finished()
    except BaseException:
        with contextlib.suppress(BenchError):  # the block's own error says what stopped it, not the release's
            beating.release()
        raise
    beating.release()


def _take(store: Store, key: Digest, mine: Claim, finished: Callable[[], T | None], what: str) -> T | None:
    """Wait until ``mine`` holds the claim on ``key`` (None) or ``finished`` answers (its answer)."""
    backend, encoded = store.backend, mine.encode()
    seen: tuple[bytes, float] | None = None  # the holder's claim as last read, and since when (monotonic)
    told, delay = False, _FIRST_POLL
    while not backend.swap_claim(key, None, encoded):
        held = backend.claimant(key)
        if held is None:
            continue  # released between the two questions: try again at once
        answer = finished()
        if answer is not None:
            return answer
        holder = Claim.parse(held)
        now = time.monotonic()
        if seen is None or seen[0] != held:
            seen = (held, now)
        if (holder is not None and holder.gone()) or now - seen[1] >= STALE_AFTER:
            if backend.swap_claim(key, held, encoded):
                _log.info("%s: took over from a dead worker (%s)", what, holder.describe() if holder else "unnamed")
                return None
            continue
        if not told:
            _log.info("%s: waiting for the worker computing it (%s)", what, holder.describe() if holder else "?")
            told = True
        time.sleep(delay)
        delay = min(delay * 2, _LAST_POLL)
    return None
