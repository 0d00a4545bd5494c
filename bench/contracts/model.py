"""The strict base every artifact inherits."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["ContractModel", "Document"]


class ContractModel(BaseModel):
    """Strict base class so an artifact does not silently change its meaning."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Document(ContractModel):
    """A top-level artifact: stored, digested and versioned.

    Subclasses declare ``kind`` as a ``Literal`` so two document types with the same fields never share a
    digest, and ``schema_version`` so a reader can refuse a shape it does not know.
    """

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        missing = [name for name in ("kind", "schema_version") if name not in cls.model_fields]
        if missing:
            raise TypeError(f"document {cls.__name__} must declare {' and '.join(missing)} as Literal fields")
