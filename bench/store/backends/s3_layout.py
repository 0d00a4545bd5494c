"""Where an S3 store keeps what, and how its ``actions`` entries and object metadata are spelled.

Layout under ``s3://BUCKET/PREFIX/``::

    objects/ab/<hex>-<size>             the bytes; metadata: document flag, creation time
    refs/<name>                         the digest the ref points at; moved by If-Match on its ETag
    actions/<key>                       the key's one result (body: result, when, outputs); created If-None-Match
    claims/<key>                        who computes the key now (bench.store.claims); moved by If-Match
    produced/<output>/<result>          the producers index
    log/<recorded time>/<key>/<result>  the action log, in time order (ListObjectsV2 StartAfter reads a tail)
    epoch                               replaced by gc before it deletes: names the local caches' generation

(``<key>``, ``<result>`` and ``<output>`` are digests spelled ``<hex>-<size>``.) These names and bodies are what
a bucket already holds: changing any of them orphans every store written before.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ...contracts import Digest
from ...contracts.strict_json import parse_json_object
from ...errors import StoreError
from .base import ObjectInfo, RecordedResult

__all__ = [
    "Area",
    "LogEntry",
    "S3Layout",
    "decode_entry",
    "digest_named",
    "encode_entry",
    "object_info",
    "object_metadata",
    "stored_as_document",
]


def _part(digest: Digest) -> str:
    return f"{digest.hex}-{digest.size}"


def digest_named(part: str) -> Digest:
    """The digest a key's last part (``<hex>-<size>``) names."""
    hex_, _, size = part.partition("-")
    return Digest.from_parts(hex_, int(size))


def _stamp(when: float) -> str:
    """A fixed-width time, so key order is time order."""
    return f"{when:020.6f}"


def object_metadata(document: bool, created: float) -> dict[str, str]:
    """The metadata an object is put with."""
    return {"document": "1" if document else "0", "created": repr(created)}


def stored_as_document(metadata: Mapping[str, str]) -> bool:
    return metadata.get("document") == "1"


def object_info(digest: Digest, size: int, metadata: Mapping[str, str]) -> ObjectInfo | None:
    """What the remote says of an object; an object of another size is not the one named (a truncated write)."""
    if size != digest.size:
        return None
    return ObjectInfo(digest, stored_as_document(metadata), float(metadata.get("created", "0")))


class Area(enum.StrEnum):
    """The folders of a store's bucket (the epoch is one key beside them)."""

    OBJECTS = "objects"
    REFS = "refs"
    ACTIONS = "actions"
    CLAIMS = "claims"
    PRODUCED = "produced"
    LOG = "log"


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One ``log/<recorded time>/<key>/<result>`` key, read back."""

    key: Digest
    result: Digest


@dataclass(frozen=True, slots=True)
class S3Layout:
    """The keys of one store: ``root`` is ``""`` or the bucket prefix with a trailing ``/``."""

    root: str

    @classmethod
    def under(cls, prefix: str) -> S3Layout:
        """The layout of the store at ``prefix`` (already stripped of ``/`` at both ends)."""
        return cls(f"{prefix}/" if prefix else "")

    def prefix(self, area: Area) -> str:
        """The prefix every key of ``area`` starts with."""
        return f"{self.root}{area}/"

    @property
    def epoch(self) -> str:
        return f"{self.root}epoch"

    def object_key(self, digest: Digest) -> str:
        return f"{self.prefix(Area.OBJECTS)}{digest.hex[:2]}/{_part(digest)}"

    def ref_key(self, name: str) -> str:
        parts = name.split("/")
        if not name or any(part in ("", ".", "..") for part in parts):
            raise StoreError(
                f"ref name {name!r} cannot be a key of an S3 store",
                field="ref",
                hint="use names of non-empty parts joined by '/', none of them '.' or '..'",
            )
        return f"{self.prefix(Area.REFS)}{name}"

    def action_key(self, key: Digest) -> str:
        return f"{self.prefix(Area.ACTIONS)}{_part(key)}"

    def claim_key(self, key: Digest) -> str:
        return f"{self.prefix(Area.CLAIMS)}{_part(key)}"

    def producers_of(self, output: Digest) -> str:
        """The prefix under which the results that produced ``output`` are listed."""
        return f"{self.prefix(Area.PRODUCED)}{_part(output)}/"

    def index_keys(self, key: Digest, result: Digest, outputs: Iterable[Digest], recorded: float) -> list[str]:
        """The producers and log entries of one result."""
        named = _part(result)
        index = [f"{self.producers_of(output)}{named}" for output in outputs]
        return [*index, f"{self.prefix(Area.LOG)}{_stamp(recorded)}/{_part(key)}/{named}"]

    def log_start(self, since: float) -> str:
        """The log key to list after for the entries recorded at ``since`` or later."""
        return f"{self.prefix(Area.LOG)}{_stamp(since)}"

    def logged_at(self, log_key: str) -> float:
        """When the log entry ``log_key`` was recorded."""
        return float(log_key[len(self.prefix(Area.LOG)) :].split("/")[0])

    def logged(self, log_key: str) -> LogEntry:
        """The key and result the log entry ``log_key`` names."""
        _, key, result = log_key[len(self.prefix(Area.LOG)) :].split("/")
        return LogEntry(digest_named(key), digest_named(result))


def encode_entry(entry: RecordedResult) -> bytes:
    """The body of an ``actions`` entry."""
    body = {"result": str(entry.result), "recorded": entry.recorded, "outputs": [str(o) for o in entry.outputs]}
    return json.dumps(body).encode()


def decode_entry(data: bytes, key: Digest, where: str) -> RecordedResult:
    """An ``actions`` entry: a shared bucket is outside input like any other, so it is read strictly."""
    body = parse_json_object(data, where)
    result, recorded, outputs = body.get("result"), body.get("recorded"), body.get("outputs")
    try:
        if not isinstance(result, str) or not isinstance(recorded, int | float) or not isinstance(outputs, list):
            raise ValueError("it needs a result, a time and a list of outputs")
        return RecordedResult(key, Digest(result), tuple(Digest(str(o)) for o in outputs), float(recorded))
    except ValueError as exc:
        raise StoreError(f"{where} is malformed: {exc}", field="result") from None
