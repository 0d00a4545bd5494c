"""Stopping the runner: a stop signal unwinds the stack like Ctrl-C, so every child is ended on the way out.

Python turns SIGINT into :class:`KeyboardInterrupt`, which unwinds through every ``finally`` and ``async with``:
the provisioner adapter destroys and kills its process group, the sandbox backends remove their containers and
networks, the gateway stops. SIGTERM and SIGHUP would instead end the process on the spot, leaving all of that
running (a provisioner runs in its own session, so it would not even see the signal). Here they raise
:class:`Interrupted`, a ``KeyboardInterrupt`` of their own, so they take exactly the same way out, and the command
line reports each stop as what it was: ``interrupted by SIGTERM`` with exit 143, not a timeout or a crash.

SIGINT takes the same handler, for one reason: a stop starts a cleanup that must not be cut short. Ctrl-C reaches
every process of the terminal's group at once, and the command line then asks the pipeline process to stop
(SIGTERM) as it unwinds; with Python's own SIGINT handling that second signal raised again inside the pipeline's
cleanup and left a container network behind. Here the first stop signal of any kind starts the one way out and
every later one is ignored.

The one stop nothing can intercept is SIGKILL: containers are then left to the sweep the next run makes before it
starts (``stele-bench sandbox sweep`` by hand; their runner's lease is dead), and a provisioner to its own lifetime.
A pipeline process asks the kernel for SIGTERM when the command that started it dies (:func:`stop_with_parent`), so
a command killed outright does not leave its pipeline running on unattended.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from types import FrameType

from .stopping import Interrupted, deferring, note_stop

__all__ = [
    "STOP_SIGNALS",
    "Interrupted",
    "end_child",
    "install_stop_signals",
    "stop_signals",
    "stop_with_parent",
]

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
_GRACE_SECONDS = 30.0
_PR_SET_PDEATHSIG = 1  # prctl(2)


def _stop(signum: int, frame: FrameType | None) -> None:
    if deferring():  # the engine is making something: raised once its handle is held (bench.stopping)
        note_stop(signum)
        return
    # One stop is enough: a second signal during the cleanup it started must not cut that cleanup short. A
    # Python-level no-op rather than SIG_IGN, because an ignored disposition would be inherited through exec.
    for number in STOP_SIGNALS:
        signal.signal(number, _already_stopping)
    raise Interrupted(signum)


def _already_stopping(signum: int, frame: FrameType | None) -> None:
    return None


def install_stop_signals() -> bool:
    """Make SIGTERM, SIGHUP and SIGINT raise :class:`Interrupted` in this process; False off the main thread, where
    Python cannot install signal handlers (the caller's own process then decides)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    for number in STOP_SIGNALS:
        signal.signal(number, _stop)
    return True


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """:func:`install_stop_signals` for the block, the previous handlers back afterwards."""
    previous = {number: signal.getsignal(number) for number in STOP_SIGNALS}
    installed = install_stop_signals()
    try:
        yield
    finally:
        if installed:
            for number, handler in previous.items():
                signal.signal(number, handler)


def end_child(process: subprocess.Popen[bytes], grace: float = _GRACE_SECONDS) -> None:
    """Ask a child that runs stages to stop (SIGTERM, so it cleans up as this process does), then kill it."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def stop_with_parent() -> None:
    """SIGTERM to this process when its parent dies (Linux's ``PR_SET_PDEATHSIG``): a stop like any other, so its
    cleanup runs. A parent that died before the request took effect (this process was reparented) is a stop now."""
    parent = os.getppid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: the parent's own stop still reaches this process
        return
    if os.getppid() != parent or parent == 1:
        os.kill(os.getpid(), signal.SIGTERM)
