"""The gateway's record kept in the store: one exchange document per request and an ordered log of their digests.

The gateway numbers exchanges and hands each to :meth:`StoreRecorder.record` from its request thread, after the
response was sent. The log document is written once the gateway has stopped (stop joins the request threads),
so it lists every exchange; a gap in the numbering is an error, never a shorter log. A store error in a request
thread (an outage, a full disk) would die with that thread, and the arm would end in a puzzling "exchanges were
lost"; it is kept instead and raised by :meth:`StoreRecorder.finish` as itself, so the run stops with the store's
exit code and the store's message.
"""

from __future__ import annotations

import threading
from typing import Literal

from ..contracts import Digest, Document
from ..errors import BenchError
from ..gateway import GatewayError
from ..gateway.exchange import ExchangeRecord
from ..store import Store

__all__ = ["ExchangeLog", "StoreRecorder", "read_exchange_log"]


class ExchangeLog(Document):
    """Every exchange of one gateway run, by sequence number."""

    kind: Literal["exchange-log"] = "exchange-log"
    schema_version: Literal[1] = 1
    exchanges: tuple[Digest, ...]


class StoreRecorder:
    """A gateway :class:`~bench.gateway.exchange.Recorder` writing into the store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._digests: dict[int, Digest] = {}
        self._failed: BenchError | None = None  # the first store error of a request thread

    def record(self, exchange: ExchangeRecord) -> None:
        try:
            digest = self.store.put_document(exchange)
        except BenchError as exc:
            with self._lock:
                self._failed = self._failed or exc
            return
        with self._lock:
            self._digests[exchange.sequence] = digest

    def finish(self) -> Digest:
        """Write the log document; call after the gateway stopped. A store error met while recording is raised."""
        with self._lock:
            if self._failed is not None:
                raise self._failed
            sequences = sorted(self._digests)
            if sequences != list(range(len(sequences))):
                raise GatewayError(f"the gateway recorded exchanges {sequences}: some were lost before the log")
            return self.store.put_document(ExchangeLog(exchanges=tuple(self._digests[s] for s in sequences)))


def read_exchange_log(store: Store, log: Digest) -> tuple[ExchangeRecord, ...]:
    """The exchanges a log lists, in order."""
    return tuple(store.get_document(d, ExchangeRecord) for d in store.get_document(log, ExchangeLog).exchanges)
