"""The gateway's record of every exchange: ground truth for what reached the model.

Each exchange is one :class:`ExchangeRecord` document. The gateway hands records to a :class:`Recorder`; the
directory-backed one appends them as canonical JSON lines, in the order the gateway numbered them, so moving
them into the store later is one ``put_document`` per line.
"""

from __future__ import annotations

import os
import threading
from decimal import Decimal
from pathlib import Path
from typing import Literal, Protocol

from pydantic import Field, JsonValue, ValidationError

from ..contracts import Document, canonical_bytes
from .errors import GatewayError
from .metering import TokenUsage

__all__ = ["DirectoryRecorder", "ExchangeRecord", "Recorder", "read_exchanges"]

LOG_NAME = "exchanges.jsonl"


class ExchangeRecord(Document):
    """One request and its response. Credentials are never recorded: the arm label stands in for the key."""

    kind: Literal["model-exchange"] = "model-exchange"
    schema_version: Literal[1] = 1
    sequence: int = Field(ge=0)
    arm: str | None  # None: the request presented no known key and was refused
    method: str
    path: str
    request_headers: dict[str, str]
    request_body: JsonValue  # parsed JSON; the raw text when it was not JSON
    status: int
    streamed: bool
    response_body: JsonValue  # the complete message (reassembled when streamed) or the error body
    rule: str | None  # the policy rule that answered; None in forward mode
    usage: TokenUsage | None
    cost_usd: Decimal = Field(ge=0, allow_inf_nan=False)
    started_at: str
    duration_ms: int = Field(ge=0)


class Recorder(Protocol):
    def record(self, exchange: ExchangeRecord) -> None:
        """Keep ``exchange`` durably; called once per request, after its response was sent, from its thread."""


class DirectoryRecorder:
    """Appends records as canonical JSON lines to ``<directory>/exchanges.jsonl``, fsynced per record."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / LOG_NAME
        self._lock = threading.Lock()

    def record(self, exchange: ExchangeRecord) -> None:
        line = canonical_bytes(exchange) + b"\n"
        with self._lock, self.path.open("ab") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())


def read_exchanges(directory: Path) -> tuple[ExchangeRecord, ...]:
    """Every record of a directory log, by sequence; a gap or a bad line is an error, never skipped."""
    path = directory / LOG_NAME
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise GatewayError(f"cannot read the exchange log {path}: {exc.strerror}") from exc
    records = []
    for number, line in enumerate(lines, 1):
        try:
            records.append(ExchangeRecord.model_validate_json(line))
        except ValidationError as exc:
            raise GatewayError(f"{path}:{number} is not an exchange record: {exc}") from exc
    records.sort(key=lambda r: r.sequence)
    sequences = [r.sequence for r in records]
    if sequences != list(range(len(records))):
        raise GatewayError(
            f"{path} has sequence numbers {sequences}, expected 0..{len(records) - 1}: records are missing"
        )
    return tuple(records)
