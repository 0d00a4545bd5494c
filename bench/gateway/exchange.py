"""The gateway's record of every exchange: ground truth for what reached the model and what came back.

Each exchange is one :class:`ExchangeRecord` document: the complete request body (however it was framed), the
answer (a streamed one both as its events, exactly as delivered, and reassembled), how its cost was decided, why
the gateway answered itself when it did, and the digests that chain a conversation's requests.

The gateway hands records to a :class:`Recorder`; the directory-backed one appends them as canonical JSON lines,
in the order the gateway numbered them, so moving them into the store later is one ``put_document`` per line.
"""

from __future__ import annotations

import os
import threading
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import Field, JsonValue, SerializerFunctionWrapHandler, ValidationError, model_serializer

from ..contracts import Document, Sha256, canonical_bytes
from ..contracts.api_dialect import ApiDialect
from .conversation import MessageChain
from .errors import GatewayError
from .metering import ChargeBasis, TokenUsage
from .neutral import RequestKind
from .stream import StreamEvent

__all__ = ["DirectoryRecorder", "ExchangeRecord", "Recorder", "Refusal", "read_exchanges"]

LOG_NAME = "exchanges.jsonl"


class Refusal(StrEnum):
    """Why the gateway answered a request itself, with the provider's error shape, instead of the model."""

    NO_KEY = "no-key"  # 401: no key, or one no arm holds
    NOT_FOUND = "not-found"  # 404: a method or path the API does not serve
    NO_API_VERSION = "no-api-version"  # 400: no anthropic-version header
    BAD_BODY = "bad-body"  # 400: unreadable framing, not a JSON object, or no positive max_tokens to bound its cost
    TOO_LARGE = "too-large"  # 413: a body past the API's request size limit
    UNPRICED_MODEL = "unpriced-model"  # 400: forward mode has no price for the model, so cannot meter it
    CAP_REACHED = "cap-reached"  # 400: the request's worst case does not fit under what is left of the arm's cap
    PROVIDER_FAILED = "provider-failed"  # 400: the arm was stopped after consecutive provider errors
    PROVIDER_MALFORMED = "provider-malformed"  # 400: the arm was stopped after a usage beyond its request's bounds
    UPSTREAM_UNREACHABLE = "upstream-unreachable"  # 502: the provider could not be reached


class ExchangeRecord(Document):
    """One request and its response. Credentials are never recorded: the arm label stands in for the key.

    The fields after ``duration_ms`` were added later and are optional, so earlier records still read.
    """

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
    request_sha256: Sha256 | None = None  # of the body bytes as received, after any chunked framing
    response_events: tuple[StreamEvent, ...] | None = None  # a streamed answer's events, exactly as delivered
    charge: ChargeBasis | None = None  # how cost_usd was decided
    refusal: Refusal | None = None  # set when the gateway answered itself
    chain: MessageChain | None = None  # digests of a messages request and its answer
    client_disconnected: bool = False  # the client went away before the whole answer was delivered
    # Forward mode: the request's worst case (its upper bound), held against the arm's cap while it was answered,
    # or the amount that did not fit when it was refused for the cap; ``cost_usd`` never exceeds it.
    worst_case_usd: Decimal | None = Field(default=None, ge=0, allow_inf_nan=False)
    request_kind: RequestKind | None = None  # what the request was for, as its harness tells (None: not told)
    # The API dialect the gateway read the request and wrote the answer in: grading reads the exchange through it.
    # Every record made before dialects existed is of the Messages API, the default.
    dialect: ApiDialect = ApiDialect.ANTHROPIC_MESSAGES

    @model_serializer(mode="wrap")
    def _without_unused(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``request_kind`` is left out while unset, and ``dialect`` while the default: a record of a harness that
        tells no kinds and speaks the Messages API keeps the bytes it had before either existed (every recorded run's
        records and their digests)."""
        dumped: dict[str, Any] = handler(self)
        if dumped.get("request_kind") is None:
            dumped.pop("request_kind", None)
        if dumped.get("dialect") == ApiDialect.ANTHROPIC_MESSAGES:
            dumped.pop("dialect", None)
        return dumped


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
