"""Run an iterator in a worker thread, a bounded distance ahead of its consumer.

Building a corpus is two kinds of work that can overlap: inflating git objects (zlib, which releases the GIL)
and writing the store (SQLite and BLAKE3, which release it too). The consumer keeps the store transaction on
its own thread, as SQLite requires; the worker only reads git. An exception in the worker is re-raised in the
consumer, so a refusal still aborts the transaction and leaves nothing stored.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["prefetched"]

T = TypeVar("T")
_BATCH = 64  # items handed over per queue operation: a handover costs a lock round trip and a GIL switch
_AHEAD = 8  # batches in flight: enough to ride out a slow write, small enough to bound memory
_POLL = 0.05


@dataclass(frozen=True)
class _Failed:
    error: BaseException


class _End:
    pass


def prefetched(items: Iterator[T]) -> Iterator[T]:
    """Yield what ``items`` yields, computed in a worker thread; stopping early stops the worker."""
    channel: queue.Queue[list[T] | _Failed | _End] = queue.Queue(maxsize=_AHEAD)
    stop = threading.Event()

    def send(item: list[T] | _Failed | _End) -> bool:
        while not stop.is_set():
            try:
                channel.put(item, timeout=_POLL)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            batch: list[T] = []
            for item in items:
                batch.append(item)
                if len(batch) == _BATCH:
                    if not send(batch):
                        return
                    batch = []
            if batch and not send(batch):
                return
            send(_End())
        except BaseException as error:  # handed to the consumer, which re-raises it
            send(_Failed(error))

    worker = threading.Thread(target=work, name="prefetch", daemon=True)
    worker.start()
    try:
        while True:
            item = channel.get()
            if isinstance(item, _End):
                return
            if isinstance(item, _Failed):
                raise item.error
            yield from item
    finally:
        stop.set()
        worker.join()
