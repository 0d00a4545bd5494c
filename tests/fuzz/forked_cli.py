"""The command line run in a forked copy of this process: as fast as a call of ``main`` (nothing is imported again),
as separate as a subprocess (its own working directory, environment, descriptors, a memory limit, a deadline).

A case that outlives its deadline is killed and reported as a hang; one that passes its memory limit fails its
allocation (``MemoryError``, which the command line would report as exit 70, a bug). What it printed is read back as
the bytes a user's terminal or script would get: stdout written strictly as UTF-8 (as under a UTF-8 locale), stderr
with Python's own ``backslashreplace``.
"""

from __future__ import annotations

import io
import json
import os
import resource
import select
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.cli import main

__all__ = ["Ran", "run_forked"]

_CRASHED = 99  # the child's own exit when main() raised instead of returning: a traceback follows on stderr
_ANSWERS = (0, 1, 3, 4, 5)  # success, a check that answered no, store fsck's findings: no refusal line needed


@dataclass(frozen=True)
class Ran:
    argv: list[str]
    code: int | None  # None: killed at its deadline (a hang)
    stdout: bytes
    stderr: bytes
    seconds: float

    def problems(self, as_json: bool) -> list[str]:
        """What breaks the command line's contract: a hang, a crash or a bug's exit, a traceback, stdout that is
        not UTF-8, not one JSON object under --json, a refusal that is not one line on stderr."""
        found = []
        err = self.stderr.decode("utf-8", "replace")
        if self.code is None:
            return [f"hung past its deadline ({self.seconds:.0f} s)"]
        if self.code in (70, _CRASHED) or self.code < 0:
            found.append(f"exit {self.code}")
        if "Traceback" in err:
            found.append("a traceback on stderr")
        try:
            out = self.stdout.decode("utf-8")
        except UnicodeDecodeError:
            return [*found, "stdout is not UTF-8"]
        said = len([line for line in err.splitlines() if line.startswith("stele-bench: ")])
        if as_json:
            value = _one_json_object(out, found)
            refused = isinstance(value, dict) and isinstance(value.get("error"), dict)
        else:
            refused = self.code not in _ANSWERS
        if said > 1 or (refused and said != 1):
            found.append(f"{said} lines of refusal on stderr, not one")
        return found


def _one_json_object(out: str, found: list[str]) -> Any:
    lines = out.removesuffix("\n").split("\n")  # JSON text may hold U+0085 or U+2028 raw: lines end at \n only
    if len(lines) != 1:
        found.append(f"{len(lines)} lines on stdout under --json, not one object")
        return None
    try:
        value: Any = json.loads(lines[0])
    except ValueError:
        found.append("stdout under --json is not JSON")
        return None
    if not isinstance(value, dict):
        found.append("stdout under --json is not an object")
    return value


def run_forked(
    argv: list[str], cwd: Path, environment: dict[str, str], *, seconds: float = 60.0, memory: int = 1 << 30
) -> Ran:
    """``stele-bench ARGV`` in a forked process from ``cwd`` with ``environment`` added, at most ``seconds`` long
    and ``memory`` bytes of address space above what this process already has."""
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - observed through its exit status and output
        os.close(out_read)
        os.close(err_read)
        _child(argv, cwd, environment, out_write, err_write, memory)
    os.close(out_write)
    os.close(err_write)
    stdout, stderr, finished = _collect(out_read, err_read, started + seconds)
    if not finished:
        os.kill(pid, signal.SIGKILL)
    status = os.waitpid(pid, 0)[1]
    code = os.waitstatus_to_exitcode(status) if finished else None
    return Ran(argv, code, stdout, stderr, time.monotonic() - started)


def _collect(out: int, err: int, deadline: float) -> tuple[bytes, bytes, bool]:
    chunks: dict[int, list[bytes]] = {out: [], err: []}
    open_ = {out, err}
    while open_:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select(list(open_), [], [], left)
        for descriptor in ready:
            data = os.read(descriptor, 1 << 16)
            if data:
                chunks[descriptor].append(data)
            else:
                open_.discard(descriptor)
    for descriptor in (out, err):
        os.close(descriptor)
    return b"".join(chunks[out]), b"".join(chunks[err]), not open_


def _child(argv: list[str], cwd: Path, environment: dict[str, str], out: int, err: int, memory: int) -> None:
    code = _CRASHED
    try:
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.close(out)
        os.close(err)
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", line_buffering=True)
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace", line_buffering=True
        )
        os.chdir(cwd)
        os.environ.update(environment)
        os.setsid()  # whatever it starts is its own group, away from the test's terminal signals
        used = _address_space()
        resource.setrlimit(resource.RLIMIT_AS, (used + memory, used + memory))
        code = main(argv)
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _address_space() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0
