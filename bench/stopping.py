"""A stop, as the code it interrupts sees it: the :class:`Interrupted` it raises, whether this process was told to
stop, and holding a stop off while something outside this process is made, so its handle is held before the stop
unwinds the stack. The signal handlers themselves are :mod:`bench.stop_signals`'.

Told to stop, a process must end, whatever its cleanup meets: an error there (a network the engine would not remove
yet) would otherwise replace the stop, and doit would take it for a failed task and hand the process its next one.
:func:`stopped` lets the code that catches task errors raise the stop again instead.

A stop signal raises where the main thread happens to be (:mod:`bench.stop_signals`). Raised inside the call that
asks the Docker engine for a network, after the engine made it and before the call returned its handle, it leaves a
network nobody holds, which no ``finally`` can remove (measured: Ctrl-C to a demo's process group left one behind).
Inside :func:`stop_deferred` the signal is only noted; when the block ends it is raised again, now with the handle
held by the code that removes it on the way out. Only the main thread receives signals, so only its blocks defer.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["Interrupted", "deferring", "note_stop", "stop_deferred", "stopped"]

_local = threading.local()
_STOPPED: list[int] = []  # the stop signal this process received, once it has


class Interrupted(KeyboardInterrupt):
    """The runner was asked to stop by ``signum``; raised where it was, so every cleanup on the way out runs."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.signal_name = signal.Signals(signum).name
        super().__init__(f"interrupted by {self.signal_name}")
        if not _STOPPED:
            _STOPPED.append(signum)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def stopped() -> Interrupted | None:
    """The stop this process was told to make, raised again by whoever caught an error in its cleanup."""
    return Interrupted(_STOPPED[0]) if _STOPPED else None


def deferring() -> bool:
    """Whether the running thread is inside :func:`stop_deferred` (asked by the signal handler, on the main thread)."""
    return bool(getattr(_local, "depth", 0))


def note_stop(signum: int) -> None:
    """Keep ``signum`` for the end of the outermost block (the first signal is the one raised)."""
    pending: list[int] = _local.__dict__.setdefault("pending", [])
    if not pending:
        pending.append(signum)


@contextmanager
def stop_deferred() -> Iterator[None]:
    """A stop signal arriving inside the block takes effect as it ends: raised again on this process."""
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        yield
    finally:
        _local.depth -= 1
        pending: list[int] = _local.__dict__.get("pending", [])
        if not _local.depth and pending:
            signal.raise_signal(pending.pop())  # the handler runs now, outside the block, and raises
