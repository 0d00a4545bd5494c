"""Work done in a forked second process, so one stage uses both cores: git objects read for a corpus (one process
inflates, the other stores), and certify's files read and scanned (:mod:`bench.packaging.blobscan`).

:func:`forked` is the one mechanism: it forks, runs the caller's producer there and receives what it sends as
frames (a code and bytes) over a pipe, raises a refusal sent back, names how a process that stopped early ended,
and kills and reaps the process when the caller stops or fails. :func:`read_forked` is the corpus's use of it.

dulwich's object reading holds the GIL for most of its work, so a reader *thread* only took turns with the
thread storing (issue 18: slower, 1.05-1.39 s against 0.97-1.13 s). A forked process has its own interpreter: it
inherits the opened repository (its pack mappings are read at offsets, never through a shared file position),
reads the listed objects through the same :meth:`~bench.packaging.gitsource.GitSource.read_located`, with the same
checks (each object hashed against its name), and streams them back over a pipe in the order listed. The pipe
holds at most a megabyte, so the reader waits for the consumer and memory stays flat however large the corpus.

Failure is never silent and never a partial result: a refusal raised while reading (a damaged object) is sent
back and raised here as the same exception with the same message; a reader that stops before sending everything
(killed, crashed, exited) is an error naming how it ended. When the consumer stops early or raises, the reader
is killed and reaped.

A process with a second thread is never forked (:func:`fork_is_safe`): the child would hold only the forking
thread, and a lock another thread held at that moment (an OpenSSL or connection-pool lock of a lease renewer,
say) would stay held there forever. Such a process reads every object itself, the same way and with the same
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
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import BinaryIO, NoReturn, TypeVar

from ..errors import SourceError

__all__ = ["Child", "Found", "Frame", "fork_is_safe", "forked", "interleaved", "read_forked"]

Found = tuple[int, bytes] | None  # an object's type number and bytes; None when the repository lacks it
Frame = tuple[int, bytes]  # what a forked process sends: the caller's code (not one of those below) and bytes
T = TypeVar("T")
_HEADER = struct.Struct("<bQ")  # a frame's code (or one of those below) and the length of what follows
_MISSING = -1  # a git object the repository lacks
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


def read_forked(
    repository: str, keys: Sequence[bytes], read: Callable[[], Iterable[tuple[bytes, Found]]]
) -> Generator[tuple[bytes, Found], None, None]:
    """What ``read()`` yields for ``keys`` (one item per key, in order), read in a forked process."""

    def frames() -> Iterator[Frame]:
        for _, found in read():
            yield (_MISSING, b"") if found is None else found

    def ended(how: str) -> SourceError:
        return SourceError(
            f"{repository}: the process reading its objects stopped before sending them all ({how})",
            path=repository,
            hint="nothing was stored; run again, and if it recurs check the machine's memory limits (dmesg)",
        )

    def unsendable(exc: Exception) -> SourceError:
        return SourceError(f"reading git objects failed: {type(exc).__name__}: {exc}")

    with forked(frames, ended, unsendable) as child:
        for key, (code, data) in zip(keys, child.frames(len(keys)), strict=True):
            yield key, None if code == _MISSING else (code, data)


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


def interleaved(first: Generator[T, None, None], second: Iterator[T], firsts: int, seconds: int) -> Iterator[T]:
    """The ``firsts`` items of ``first`` and the ``seconds`` of ``second``, mixed evenly (each drawn while its
    share of what was drawn is behind); ``first`` is closed (its reader stopped) however this ends."""
    drawn_first = drawn_second = 0
    try:
        while drawn_first < firsts or drawn_second < seconds:
            if drawn_second >= seconds or (drawn_first < firsts and drawn_first * seconds <= drawn_second * firsts):
                yield next(first)
                drawn_first += 1
            else:
                yield next(second)
                drawn_second += 1
        for extra in (first, second):  # each must end where its count says: the forked reader checks its end
            for _ in extra:
                raise AssertionError("more items than counted")
    finally:
        first.close()


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
