"""A tree's files read, verified and scanned for markers: part of them in a forked process when there are many.

Certification reads every file of a corpus, re-hashes it and scans it (issue 18: at 11,005 files and 80 MB, 165
ms of reading and verifying and 38 ms of scanning, on one core). A worker *thread* reading and verifying while
this one scanned cost 0.42-0.47 s of CPU against 0.28 s, and more wall time too (0.33-0.40 s against 0.29-0.30 s),
as both hold the GIL for most of their work; so a forked process reads, verifies and scans a share of the files
through a store handle of its own (:meth:`~bench.store.Store.reopener`: it never touches this process's SQLite
connection) and sends back only what it found: the total of bytes scanned and, for each file with hits, its
place in its share and the hits. The fork, the pipe, the refusals and the reaping are those of the corpus's
forked reader (:func:`~bench.forking.forked`): a corrupt or missing object found there is raised
here as the same :class:`~bench.errors.ObjectCorrupt` or :class:`~bench.errors.ObjectMissing`, a process that
stops before its end is a one-line error naming how it ended, and it is killed and reaped when this side fails.

The result is the same on either route; a process running a second thread
(:func:`~bench.forking.fork_is_safe`), a backend that cannot be reopened in a forked process (a bucket), a store
in the middle of a transaction and a small tree are all scanned here alone.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator, Sequence

from ..contracts import Digest
from ..errors import StoreError
from ..forking import Frame, fork_is_safe, forked
from ..store import Store
from .markers import Hit, TextScanner

__all__ = ["FORK_MIN_BLOBS", "Scanned", "scan_blobs"]

FORK_MIN_BLOBS = 512  # fewer are scanned here alone: a fork and a reopened store cost about 4 ms, 250 files' scan
FORKED_SHARE = 0.55  # of the files, scanned by the forked process; the rest here

Scanned = tuple[int, list[tuple[Digest, list[Hit]]]]  # bytes scanned; each file with hits, with its hits


def scan_blobs(
    store: Store, digests: Sequence[Digest], scanner: TextScanner, what: str, meanwhile: Callable[[], object]
) -> Scanned:
    """Every object of ``digests`` read verified from ``store`` and scanned; ``meanwhile()`` is run in this process
    first (while a forked process reads its share), and ``what`` names the caller (the surface) in the error for
    a forked process that stopped early."""
    reopen = store.reopener() if len(digests) >= FORK_MIN_BLOBS and fork_is_safe() else None
    if reopen is None:
        meanwhile()
        return _scanned(store, digests, scanner)
    split = int(len(digests) * FORKED_SHARE)
    theirs, mine = digests[:split], digests[split:]

    def ended(how: str) -> StoreError:
        return StoreError(
            f"{what}: the process scanning {len(theirs)} of its files stopped before sending what it found ({how})",
            hint="nothing was certified; run again, and if it recurs check the machine's memory limits (dmesg)",
        )

    with forked(lambda: _sent(reopen, theirs, scanner), ended, _unsendable) as child:
        meanwhile()
        scanned, hits = _scanned(store, mine, scanner)
        [(_, data)] = list(child.frames(1))
    # Unpickled from the process this one forked, over a pipe no one else holds.
    their_bytes, their_hits = pickle.loads(data)
    hits += ((theirs[index], found) for index, found in their_hits)
    return scanned + their_bytes, hits


def _scanned(store: Store, digests: Sequence[Digest], scanner: TextScanner) -> Scanned:
    """Bytes scanned, and each file with hits, reading ``digests`` in this process."""
    scanned = 0
    hits: list[tuple[Digest, list[Hit]]] = []
    # In pack order: a directory's files lie far apart in a corpus stored in git's order, so reading them in walk
    # order took a pread per object or two on a large tree (35,157 at 4x against 2,594 at 1x: super-linear).
    for digest, data in store.get_unordered(digests):
        scanned += len(data)
        found = list(scanner.scan(data))
        if found:
            hits.append((digest, found))
    return scanned, hits


def _sent(reopen: Callable[[], Store], digests: Sequence[Digest], scanner: TextScanner) -> Iterator[Frame]:
    """The forked process's work: its share scanned through its own store, as one frame."""
    scanned, hits = _scanned(reopen(), digests, scanner)
    places = {digest: index for index, digest in enumerate(digests)} if hits else {}
    yield 0, pickle.dumps((scanned, [(places[digest], found) for digest, found in hits]))


def _unsendable(exc: Exception) -> StoreError:
    return StoreError(f"scanning stored objects failed: {type(exc).__name__}: {exc}")
