"""What a stored object points at: the reference fields of a document, by their types (blobs point at nothing).

A document is read through its contract (:meth:`Document.of_kind`), and a reference is a field typed as one:
``Digest``, ``BlobDigest``, ``TreeDigest`` or ``Ref[...]``. A :class:`DigestValue` (a preregistration's digest, a
comparability key's id) and a digest-shaped string in an untyped field (an action key's params) are values, not
references, so fsck does not report them missing and gc does not keep what they happen to name. A document of no
contract this process declares, or one its contract refuses (an older schema version), is walked by shape: every
digest-shaped string counts, so gc never drops what it might name. This is what fsck checks, gc marks from and a
bundle's lineage carries.
"""

from __future__ import annotations

import decimal
import enum
import functools
import json
import typing
from collections.abc import Callable, Iterator
from typing import Any

from pydantic import BaseModel, JsonValue, ValidationError

from ..contracts import Digest, DigestValue, Document
from ..errors import ContractError
from .store import Store

Reader = Callable[[type[Document]], Document]

__all__ = ["document_references", "references", "walk_digests"]


def references(store: Store, digest: Digest) -> Iterator[Digest]:
    """Digests referred to by the object ``digest`` (none for a blob)."""
    if not store.is_document(digest):
        return
    yield from document_references(store.get_bytes(digest))


def document_references(data: bytes, parsed: Any = None, read: Reader | None = None) -> list[Digest]:
    """The references of a stored document's bytes, in field order (repeats kept); ``parsed``: ``data`` as the
    caller has already parsed it (None: parsed here); ``read``: how the caller's store reads ``data`` through a
    contract (:meth:`Store.get_document` of its digest; an append-only store then reads it once for everyone)."""
    parsed = json.loads(data) if parsed is None else parsed
    kind = parsed.get("kind") if isinstance(parsed, dict) else None
    model = Document.of_kind(kind) if isinstance(kind, str) else None
    if model is not None:
        try:
            return _typed(model.model_validate_json(data) if read is None else read(model))
        except (ValidationError, ContractError):  # the store's refusal of a ValidationError is a ContractError
            pass  # a shape this release does not read: by shape, below
    return list(walk_digests(parsed))


def _typed(value: Any) -> list[Digest]:
    """The references in a validated value, in field order (repeats kept). One loop over a stack, not a generator
    per value: a bundle's lineage holds documents of thousands of values, and the nested generators were most of
    reading them."""
    found: list[Digest] = []
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, Digest):
            if not isinstance(item, DigestValue):
                found.append(item)
        elif isinstance(item, BaseModel):
            pending.extend(getattr(item, name) for name in reversed(_reference_fields(type(item))))
        elif isinstance(item, (list, tuple)):
            pending.extend(reversed(item))
        elif isinstance(item, dict):
            for key, entry in reversed(item.items()):
                pending += (entry, key)
    return found


_ASKING: set[type[BaseModel]] = set()  # models whose fields are being asked: a model that holds itself


@functools.cache
def _reference_fields(model: type[BaseModel]) -> tuple[str, ...]:
    """The fields of ``model`` that can hold a reference, in field order: walking only these, not every field of
    every validated model, was most of reading a bundle's lineage (issue 39)."""
    _ASKING.add(model)
    try:
        return tuple(name for name, field in model.model_fields.items() if _may_refer(field.annotation))
    finally:
        _ASKING.discard(model)


def _may_refer(annotation: Any) -> bool:
    """Whether a value validated as ``annotation`` can be or hold a reference. Only what is known to be a plain
    value answers no (str, numbers, Decimal, bytes, None, an enum, a literal, a DigestValue, ``Any`` and
    ``JsonValue``, which JSON validation leaves as plain JSON values, and containers of only those), and a model none
    of whose fields can; anything else (a type this does not know) answers yes, so nothing is skipped by mistake.
    An exchange's recorded stream events (``Any``), then its request and answer bodies (``JsonValue``), were most
    of the fields walked in a bundle."""
    if annotation is Any or annotation is JsonValue:
        return False
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return False
    if origin is typing.Annotated:
        return _may_refer(typing.get_args(annotation)[0])
    if origin is not None:  # a union, list, tuple, dict, ...: any of its arguments
        return any(_may_refer(argument) for argument in typing.get_args(annotation) if argument is not Ellipsis)
    if not isinstance(annotation, type):
        return True
    if issubclass(annotation, Digest):
        return not issubclass(annotation, DigestValue)
    if issubclass(annotation, BaseModel):  # JSON validation makes exactly this model: one with such fields
        return annotation in _ASKING or bool(_reference_fields(annotation))  # asked already: yes, not to loop
    return not issubclass(annotation, (str, int, float, decimal.Decimal, bytes, enum.Enum, type(None)))


def walk_digests(value: Any) -> Iterator[Digest]:
    """Every digest-shaped string in parsed JSON: the references of a document no contract reads."""
    if isinstance(value, str):
        if Digest.pattern.fullmatch(value):
            yield Digest(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from walk_digests(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk_digests(item)
