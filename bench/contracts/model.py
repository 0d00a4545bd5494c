"""The strict base every artifact inherits."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

__all__ = ["ContractModel", "Document"]

_KINDS: dict[str, type[Document]] = {}  # every declared document by its kind: how a stored document is read


class ContractModel(BaseModel):
    """Strict base class so an artifact does not silently change its meaning.

    A model's validator is built when it first validates, not when its module is imported (``defer_build``): a
    command imports a few hundred contracts and uses a handful, and building them all was a fifth of its start-up."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, defer_build=True)


class Document(ContractModel):
    """A top-level artifact: stored, digested and versioned.

    Subclasses declare ``kind`` as a ``Literal`` so two document types with the same fields never share a
    digest, and ``schema_version`` so a reader can refuse a shape it does not know.
    """

    @field_validator("schema_version", mode="before", check_fields=False)
    @classmethod
    def _version_is_an_integer(cls, value: Any) -> Any:
        # A Literal compares by equality, so `true` and `1.0` would pass as version 1; a version is an integer.
        if type(value) is not int:
            raise ValueError(f"schema_version must be an integer, got {value!r}")
        return value

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        missing = [name for name in ("kind", "schema_version") if name not in cls.model_fields]
        if missing:
            raise TypeError(f"document {cls.__name__} must declare {' and '.join(missing)} as Literal fields")
        kind = cls.model_fields["kind"].default
        if isinstance(kind, str):
            known = _KINDS.setdefault(kind, cls)
            reloaded = (known.__module__, known.__qualname__) == (cls.__module__, cls.__qualname__)
            if known is not cls and not reloaded:
                raise TypeError(f"documents {known.__name__} and {cls.__name__} both declare kind {kind!r}")
            _KINDS[kind] = cls

    @staticmethod
    def of_kind(kind: str) -> type[Document] | None:
        """The contract of documents of ``kind``, among those declared in this process (None: none is)."""
        return _KINDS.get(kind)
