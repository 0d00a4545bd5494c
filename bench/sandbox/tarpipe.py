"""Byte streams between the store and the engine's archive API, without a host checkout or a whole-tar buffer.

The engine takes a workspace as a request body and gives one back as an iterator of chunks. :func:`tree_chunks`
turns a store tree into such chunks (``write_tar`` runs in a thread writing into a pipe), and
:class:`ChunkReader` turns the engine's chunks into the file object ``tree_from_tar`` reads.
"""

from __future__ import annotations

import contextlib
import io
import queue
import threading
from collections.abc import Generator, Iterable, Iterator
from typing import BinaryIO

from ..contracts import Digest
from ..store import Store, write_tar
from .layout import WORKSPACE_MTIME

__all__ = ["CHUNK", "ChunkReader", "chunk_stream", "tree_chunks"]

CHUNK = 1 << 20


class ChunkReader(io.RawIOBase):
    """A readable file over an iterable of byte chunks."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._pending:
            try:
                self._pending = memoryview(next(self._chunks))
            except StopIteration:
                return 0
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size


def chunk_stream(chunks: Iterable[bytes]) -> BinaryIO:
    """A buffered binary file over ``chunks``, for readers that want a file (``tree_from_tar``)."""
    return io.BufferedReader(ChunkReader(chunks), CHUNK)


class _QueueSink(io.RawIOBase):
    """A writable file handing ``CHUNK``-sized pieces to a bounded queue; it stops when the reader has gone."""

    def __init__(self, pieces: queue.Queue[bytes | None], gone: threading.Event) -> None:
        self._pieces = pieces
        self._gone = gone
        self._pending = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        self._pending += data
        if len(self._pending) >= CHUNK:
            self.hand_over(bytes(self._pending))
            self._pending.clear()
        return len(data)

    def hand_over(self, piece: bytes | None) -> None:
        """Queue ``piece`` (None marks the end), waiting for room unless the reader has gone."""
        while True:
            if self._gone.is_set():
                raise BrokenPipeError("the reader of the workspace tar stopped")
            try:
                self._pieces.put(piece, timeout=0.1)
                return
            except queue.Full:
                continue

    def finish(self) -> None:
        if self._pending:
            self.hand_over(bytes(self._pending))
        self.hand_over(None)


def tree_chunks(store: Store, tree: Digest, *, prefix: str, uid: int, gid: int) -> Generator[bytes, None, None]:
    """The tar of ``tree`` under ``prefix`` as ~1 MiB chunks, every entry dated :data:`~.layout.WORKSPACE_MTIME`; an
    error in the writer is raised to the reader.

    ``write_tar`` pushes bytes, the engine's request body pulls them: a writer thread fills a bounded queue, so at
    most a few chunks are in memory whatever the workspace size. The store keeps one SQLite connection per
    thread, so reading it in the writer thread is safe.
    """
    pieces: queue.Queue[bytes | None] = queue.Queue(maxsize=8)
    gone = threading.Event()
    failure: list[BaseException] = []

    def produce() -> None:
        sink = _QueueSink(pieces, gone)
        try:
            write_tar(store, tree, sink, prefix=prefix, uid=uid, gid=gid, mtime=WORKSPACE_MTIME)  # type: ignore[arg-type]
            sink.finish()
        except BaseException as exc:  # handed to the reader below
            failure.append(exc)
            with contextlib.suppress(BrokenPipeError):
                sink.hand_over(None)

    writer = threading.Thread(target=produce, name="tar-writer", daemon=True)
    writer.start()
    try:
        while (piece := pieces.get()) is not None:
            yield piece
    finally:
        gone.set()  # a reader that stops early (Ctrl-C, engine error) releases the writer at once
        writer.join()
    if failure:
        raise failure[0]
