"""Token usage, prices and the per-arm spending meter of the gateway.

Cost is computed from the usage a response reports, with the runner's price table, never from a client's own
estimate. The cap is checked before a request is forwarded: a request that starts under the cap completes, so
an arm can overshoot its cap by at most one response per request in flight (Claude Code's main loop sends one
at a time); the overshoot is in the record.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pydantic import Field

from ..contracts import ContractModel

__all__ = ["ArmKey", "Meter", "Price", "TokenUsage"]

_PER_MILLION = 1_000_000


class TokenUsage(ContractModel):
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cache_creation_input_tokens: int = Field(default=0, ge=0)
    cache_read_input_tokens: int = Field(default=0, ge=0)

    @classmethod
    def of(cls, usage: Mapping[str, Any] | None) -> TokenUsage:
        """The counted fields of an API ``usage`` object; the API sends null for counts it did not take."""
        fields = cls.model_fields
        return cls(**{k: v for k, v in (usage or {}).items() if k in fields and isinstance(v, int)})

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(**{k: getattr(self, k) + getattr(other, k) for k in type(self).model_fields})


class Price(ContractModel):
    """USD per million tokens for one model."""

    input: Decimal = Field(ge=0, allow_inf_nan=False)
    output: Decimal = Field(ge=0, allow_inf_nan=False)
    cache_write: Decimal = Field(ge=0, allow_inf_nan=False)
    cache_read: Decimal = Field(ge=0, allow_inf_nan=False)

    def cost(self, usage: TokenUsage) -> Decimal:
        """Exact: money is never accumulated in binary floating point."""
        total = (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_creation_input_tokens * self.cache_write
            + usage.cache_read_input_tokens * self.cache_read
        )
        return total / _PER_MILLION


class ArmKey(ContractModel):
    """One arm's identity at the gateway: the SHA-256 of the API key its client presents, and its cap."""

    label: str = Field(min_length=1)
    key_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    cap_usd: Decimal = Field(ge=0, allow_inf_nan=False)


class Meter:
    """Spending per arm label, shared by the gateway's request threads."""

    def __init__(self, arms: tuple[ArmKey, ...]) -> None:
        self._caps = {arm.label: arm.cap_usd for arm in arms}
        self._spent = dict.fromkeys(self._caps, Decimal(0))
        self._lock = threading.Lock()

    def spent(self, label: str) -> Decimal:
        with self._lock:
            return self._spent[label]

    def over_cap(self, label: str) -> bool:
        with self._lock:
            return self._spent[label] >= self._caps[label]

    def charge(self, label: str, cost: Decimal) -> Decimal:
        """Add ``cost`` to the arm and return its new total."""
        with self._lock:
            self._spent[label] += cost
            return self._spent[label]

    def cap(self, label: str) -> Decimal:
        return self._caps[label]
