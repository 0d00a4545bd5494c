"""The forks a test makes, recorded (the ``forks`` fixture, in conftest.py), and whether one was reaped."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

import pytest


def recorded_forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The process ids this process forks, from here on."""
    started: list[int] = []
    fork = os.fork

    def recorded() -> int:
        pid = fork()
        if pid:
            started.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", recorded)
    return started


def reaped(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@contextlib.contextmanager
def another_thread() -> Iterator[None]:
    """A second thread of this process, waiting, for as long as the block runs."""
    release = threading.Event()
    other = threading.Thread(target=release.wait, name="holds-a-lock-maybe")
    other.start()
    try:
        yield
    finally:
        release.set()
        other.join()
