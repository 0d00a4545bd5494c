"""The forks a test makes, recorded (the ``forks`` fixture, in conftest.py), and whether one was reaped."""

from __future__ import annotations

import os

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
