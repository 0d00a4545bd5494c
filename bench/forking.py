"""Work done in a forked second process, so one stage uses both cores: :func:`forked` is the one mechanism.

Its uses: a corpus's git objects read in one process and stored in the other
(:func:`bench.packaging.forkedreads.read_forked`), certify's files read and scanned
(:mod:`bench.packaging.blobscan`), a published bundle's files re-hashed (:mod:`bench.publish.filedigests`) and its
shape checked while it is re-derived (:mod:`bench.publish.judged_beside`).

dulwich's reading, BLAKE3 and a scan hold the GIL for most of their work, so a worker *thread* only took turns
with the thread it was meant to relieve (issue 18: a corpus 1.05-1.39 s against 0.97-1.13 s). A forked process
has its own interpreter and inherits what this one has open (a repository's pack mappings, read at offsets, never
through a shared file position). :func:`forked` forks, runs the caller's producer there and receives what it
sends as frames (a code and bytes) over a pipe; the pipe holds at most a megabyte, so a producer that sends more
waits for the consumer, and memory stays flat however much is sent.

Failure is never silent and never a partial result: a refusal raised in the forked process is sent back and
raised here as the same exception with the same message; a process that stops before its end (killed, crashed,
exited) is the caller's error naming how it ended. When the consumer stops early or raises, the process is
killed and reaped.

A process with a second thread is never forked (:func:`fork_is_safe`): the child would hold only the forking
thread, and a lock another thread held at that moment (an OpenSSL or connection-pool lock of a lease renewer,
say) would stay held there forever. Each caller then does the whole work itself, the same way and with the same
result.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import os
import pickle
import signal
import struct
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO, NoReturn

__all__ = ["Child", "Frame", "fork_is_safe", "forked"]

Frame = tuple[int, bytes]  # what a forked process sends: a code of the caller's (-128 to 127 but -2, -3), bytes
_HEADER = struct.Struct("<bQ")  # a frame's code (or one of those below) and the length of what follows
_REFUSED, _END = -2, -3  # the forked process raised (a pickled exception follows); it sent everything
_PIPE_BYTES = 1 << 20  # Linux's default cap for an unprivileged pipe (/proc/sys/fs/pipe-max-size)


def fork_is_safe() -> bool:
    """Whether this process may fork a reader: only while it runs one thread (see the module's account). On
    Linux the kernel's count is asked, since threads started by native code (a Ray or gRPC client's) are not
    Python's to count; elsewhere Python's own count decides."""
    if threading.active_count() != 1:
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return True


class Child:
    """A forked process: its id, its stream of frames, and its wait status once reaped (so it is never signalled
    after)."""

    def __init__(self, pid: int, ended: Callable[[str], Exception]) -> None:
        self.pid = pid
        self.status: int | None = None
        self.stream: BinaryIO | None = None
        self._ended = ended

    def frames(self, count: int) -> Iterator[Frame]:
        """The ``count`` frames the process sends, then its end; a refusal it sends is raised here as it is."""
        for _ in range(count):
            code, data = self._frame()
            if code == _REFUSED:  # pickled by the process this one forked, over a pipe no one else holds
                raise pickle.loads(data)
            if code == _END:
                raise self.ended()
            yield code, data
        if self._frame()[0] != _END:
            raise self.ended()

    def _frame(self) -> Frame:
        assert self.stream is not None, "frames are read inside forked()"
        header = self.stream.read(_HEADER.size)
        if len(header) == _HEADER.size:
            code, size = _HEADER.unpack(header)
            data = self.stream.read(size) if size else b""
            if len(data) == size:
                return code, data
        raise self.ended()

    def ended(self) -> Exception:
        """The caller's error for a process that stopped before its end, naming how it ended."""
        status = self.reap()
        if os.WIFSIGNALED(status):
            return self._ended(f"killed by signal {os.WTERMSIG(status)}")
        return self._ended(f"exit status {os.waitstatus_to_exitcode(status)}")

    def reap(self) -> int:
        if self.status is None:
            self.status = os.waitpid(self.pid, 0)[1]
        return self.status

    def stop(self) -> None:
        if self.status is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self.reap()


@contextlib.contextmanager
def forked(
    produce: Callable[[], Iterable[Frame]],
    ended: Callable[[str], Exception],
    unsendable: Callable[[Exception], Exception],
) -> Iterator[Child]:
    """A forked process running ``produce()`` and sending each frame it yields, as :meth:`Child.frames` receives
    them. ``ended(how)`` is the error for a process that stopped before its end (``how``: "killed by signal 9"),
    ``unsendable(exc)`` what crosses in place of a refusal that cannot be rebuilt here. Leaving the block early or
    by an exception kills and reaps the process; leaving it normally reaps it and checks its exit status."""
    receiving, sending = os.pipe()
    with contextlib.suppress(OSError, AttributeError):  # a smaller pipe (or no Linux) only means more switches
        fcntl.fcntl(sending, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's exit status and stream are what the tests observe
        os.close(receiving)
        _serve(sending, produce, unsendable)
    os.close(sending)
    child = Child(pid, ended)
    try:
        with open(receiving, "rb", buffering=_PIPE_BYTES) as stream:
            child.stream = stream
            yield child
    except BaseException:
        child.stop()
        raise
    if child.reap() != 0:
        raise child.ended()


def _serve(
    sending: int, produce: Callable[[], Iterable[Frame]], unsendable: Callable[[Exception], Exception]
) -> NoReturn:  # pragma: no cover - runs in the forked process
    """The forked process's whole life: send what ``produce()`` yields, then leave without running the parent's
    exit handlers or finalizers (its store connection, its temporary files are the parent's to close)."""
    status = 1
    try:
        gc.disable()  # a collection would touch, and so copy, every page of the heap shared with the parent
        with open(sending, "wb", buffering=_PIPE_BYTES) as stream:
            try:
                for code, data in produce():
                    _send(stream, code, data)
            except Exception as exc:  # a refusal: raised again, as it is, where the frames are received
                _send(stream, _REFUSED, _pickled(exc, unsendable))
            else:
                _send(stream, _END, b"")
        status = 0
    finally:
        os._exit(status)


def _send(stream: BinaryIO, code: int, data: bytes) -> None:
    stream.write(_HEADER.pack(code, len(data)))
    stream.write(data)


def _pickled(exc: Exception, unsendable: Callable[[Exception], Exception]) -> bytes:
    exc.__traceback__ = None
    try:
        sent = pickle.dumps(exc)
        pickle.loads(sent)  # some exceptions pickle but cannot be rebuilt (a constructor with other arguments)
        return sent
    except Exception:  # an exception that cannot cross: the caller's account of it
        return pickle.dumps(unsendable(exc))
