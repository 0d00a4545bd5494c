"""Digest types: compiled patterns, never bare strings.

A :class:`Digest` names a store object: its BLAKE3 hash and its size, spelled ``blake3:<64 hex>:<size>``. The
size is part of the name so a truncated object can never pass as the real one and so listings can show sizes
without reading objects. :class:`Sha256` is the bare lowercase hex the seed's wire formats use (verifier
assets, provisioner artifacts).

What a digest names is part of its type, as dulwich keeps hex and raw ids apart: a :class:`TreeDigest` names a
Merkle directory object, a :class:`BlobDigest` raw bytes, and ``Ref[Model]`` a document of that contract. All are
spelled the same on the wire; the type is what a stage declares and what a plan is checked against, so wiring an
arm record where a tree is expected is refused before anything runs. Each of these is a reference to a stored
object; a :class:`DigestValue` is a digest kept as a value (an identity, a fingerprint), which nothing follows.
:class:`ImageId` (an engine image, pinned) and :class:`GitObjectId` (a full git object id) are names of things
outside the store.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Self, TypeVar

import blake3
from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

__all__ = [
    "BlobDigest",
    "Digest",
    "DigestValue",
    "GitObjectId",
    "ImageId",
    "Ref",
    "Sha256",
    "TreeDigest",
    "accepts",
    "blake3_hex",
    "digest_type_name",
]


class _PatternStr(str):
    """A string whose every instance has been checked against ``pattern``."""

    pattern: ClassVar[re.Pattern[str]]
    meaning: ClassVar[str]
    # A match that admits only values ``cls(value)`` admits unchanged (a subclass whose ``__new__`` takes a
    # faster route names that route's pattern here); None when it fails, and the full check decides.
    quick_match: ClassVar[Callable[..., object]]  # called with the string alone: a bound match, not a method

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "quick_match" not in cls.__dict__ and "pattern" in cls.__dict__:
            cls.quick_match = cls.pattern.fullmatch

    def __new__(cls, value: str) -> Self:
        if not isinstance(value, str) or not cls.pattern.fullmatch(value):
            raise ValueError(f"{value!r} is not {cls.meaning} (expected the form {cls.pattern.pattern})")
        return super().__new__(cls, value)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        quick, make, coerce = cls.quick_match, str.__new__, cls._coerce

        def validate(value: object) -> _PatternStr:
            # A string fresh from JSON that matches: the common case, one match and no further calls (a
            # manifest's or a tree's thousands of digests and paths each took four calls, most of a read).
            if type(value) is str and quick(value) is not None:
                return make(cls, value)
            return coerce(value)

        return core_schema.no_info_plain_validator_function(
            validate, serialization=core_schema.plain_serializer_function_ser_schema(str)
        )

    @classmethod
    def _coerce(cls, value: object) -> _PatternStr:
        if isinstance(value, cls):
            return value
        if not isinstance(value, str):
            raise ValueError(f"{value!r} is not {cls.meaning}: expected a string, got {type(value).__name__}")
        return cls(value)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {"type": "string", "pattern": cls.pattern.pattern.replace("\\Z", "$"), "description": cls.meaning}


class Digest(_PatternStr):
    """The name of a store object: ``blake3:<64 lowercase hex>:<size in bytes>``."""

    pattern = re.compile(r"^blake3:[0-9a-f]{64}:(0|[1-9][0-9]*)\Z")
    meaning = "a store digest"

    @classmethod
    def of(cls, data: bytes) -> Self:
        """The digest naming ``data``; well formed by construction, so not matched against the pattern again
        (hashing a tree's files is per-file work, where the match cost as much as hashing 8 KB)."""
        return str.__new__(cls, f"blake3:{blake3_hex(data)}:{len(data)}")

    @classmethod
    def from_parts(cls, hex_: str, size: int) -> Self:
        return cls(f"blake3:{hex_}:{size}")

    @property
    def hex(self) -> str:
        return self[7:71]

    @property
    def size(self) -> int:
        return int(self[72:])

    @property
    def short(self) -> str:
        """A short form for progress lines and listings; every command taking a digest resolves it as a prefix."""
        return self.hex[:12]


class DigestValue(Digest):
    """A digest used as a value, not a reference: the identity of something the store need not hold (a
    preregistration, a comparability key, one field of a challenge manifest). Spelled like any digest; fsck, gc and
    a bundle's lineage never follow it (:mod:`bench.store.references` follows only the other digest types)."""

    meaning = "a digest used as a value"


class BlobDigest(Digest):
    """A digest naming raw bytes (a file's content, a stream, a log)."""

    meaning = "a store digest of raw bytes"


class TreeDigest(Digest):
    """A digest naming a Merkle directory object (a tree)."""

    meaning = "a store digest of a tree"


M = TypeVar("M")


class Ref(Digest, Generic[M]):
    """A digest naming a document of contract ``M``: ``Ref[ArmRecord]`` is its own type.

    Subscripting makes (once, then cached) a real subclass that remembers its contract, so pydantic validates
    and a plan check compares it with ``issubclass`` like every other digest type.
    """

    meaning = "a store digest of a document"
    document: ClassVar[type[Any] | None] = None
    _made: ClassVar[dict[type[Any], type[Ref[Any]]]] = {}

    if not TYPE_CHECKING:  # to the type checker Ref is an ordinary generic

        def __class_getitem__(cls, model: type[Any]) -> type[Ref[Any]]:
            made = Ref._made.get(model)
            if made is None:
                name = f"Ref[{model.__name__}]"
                made = type(name, (Ref,), {"document": model, "meaning": f"a store digest of a {model.__name__}"})
                made.__module__ = cls.__module__
                Ref._made[model] = made
            return made


def accepts(consumer: type[Digest], producer: type[Digest]) -> bool:
    """Whether a value of digest type ``producer`` may fill a port of digest type ``consumer``."""
    if issubclass(consumer, Ref) and issubclass(producer, Ref):
        if consumer.document is None:
            return True
        return producer.document is not None and issubclass(producer.document, consumer.document)
    return issubclass(producer, consumer)


def digest_type_name(kind: type[Digest]) -> str:
    return kind.__name__


class ImageId(_PatternStr):
    """An engine image pinned by its content ID: ``sha256:<64 hex>``."""

    pattern = re.compile(r"^sha256:[0-9a-f]{64}\Z")
    meaning = "an image ID"


class GitObjectId(_PatternStr):
    """A full git object id: 40 lowercase hex characters (SHA-1 repositories)."""

    pattern = re.compile(r"^[0-9a-f]{40}\Z")
    meaning = "a full git object id"


class Sha256(_PatternStr):
    """A SHA-256 digest as 64 lowercase hex characters."""

    pattern = re.compile(r"^[0-9a-f]{64}\Z")
    meaning = "a SHA-256 hex digest"

    @classmethod
    def of(cls, data: bytes) -> Sha256:
        return cls(hashlib.sha256(data).hexdigest())


def blake3_hex(data: bytes) -> str:
    """BLAKE3 of ``data`` as lowercase hex, multithreaded for large inputs."""
    if len(data) > 1 << 20:
        return blake3.blake3(data, max_threads=blake3.blake3.AUTO).hexdigest()
    return blake3.blake3(data).hexdigest()
