"""The gateway's record kept in the store: one exchange document per request and an ordered log of their digests.

The gateway numbers exchanges and hands each to :meth:`StoreRecorder.record` from its request thread, after the
response was sent. The log document is written once the gateway has stopped (stop joins the request threads),
so it lists every exchange; a gap in the numbering is an error, never a shorter log.
"""

from __future__ import annotations

import threading
from typing import Literal

from ..contracts import Digest, Document
from ..gateway.errors import GatewayError
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

    def record(self, exchange: ExchangeRecord) -> None:
        digest = self.store.put_document(exchange)
        with self._lock:
            self._digests[exchange.sequence] = digest

    def finish(self) -> Digest:
        """Write the log document; call after the gateway stopped."""
        with self._lock:
            sequences = sorted(self._digests)
            if sequences != list(range(len(sequences))):
                raise GatewayError(f"the gateway recorded exchanges {sequences}: some were lost before the log")
            return self.store.put_document(ExchangeLog(exchanges=tuple(self._digests[s] for s in sequences)))


def read_exchange_log(store: Store, log: Digest) -> tuple[ExchangeRecord, ...]:
    """The exchanges a log lists, in order."""
    return tuple(store.get_document(d, ExchangeRecord) for d in store.get_document(log, ExchangeLog).exchanges)
