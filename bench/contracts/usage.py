"""Token counts as a model's answer reports them: shared by the gateway's metering and the harnesses' transcripts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from .model import ContractModel

__all__ = ["TokenUsage"]


class TokenUsage(ContractModel):
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cache_creation_input_tokens: int = Field(default=0, ge=0)
    cache_read_input_tokens: int = Field(default=0, ge=0)

    @classmethod
    def of(cls, usage: Mapping[str, Any] | None) -> TokenUsage:
        """The counted fields of a ``usage`` object, leniently (transcripts); metering uses its own strict reader."""
        fields = cls.model_fields
        return cls(**{k: v for k, v in (usage or {}).items() if k in fields and isinstance(v, int)})

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(**{k: getattr(self, k) + getattr(other, k) for k in type(self).model_fields})
