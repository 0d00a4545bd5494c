"""Token usage, prices and the per-arm spending meter of the gateway.

Cost is computed from the usage an answer reports, with the runner's price table, never from a client's own
estimate, and in exact decimals. An answer the provider may have billed but whose usage is missing, malformed or
cut short is charged its upper bound (every request byte a token at the dearest input rate, plus ``max_tokens``
of output), never zero, and its record says so.

The cap is checked before a request is forwarded: a request that starts under the cap completes, so an arm can
overshoot its cap by at most one answer per request in flight (Claude Code's main loop sends one at a time);
the overshoot is in the record and in :class:`ArmSpend`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from decimal import Decimal
from enum import StrEnum
from typing import Any

from pydantic import Field

from ..contracts import ContractModel
from ..fence.caps import PairCaps

__all__ = ["ArmSpend", "ChargeBasis", "Meter", "Price", "TokenUsage", "metered_usage", "stream_usage"]

_PER_MILLION = 1_000_000
# Tokens the API adds to a prompt beyond the request's own bytes (the tool-use system prompt is a few hundred):
# generous, since it only ever raises an upper bound.
_PROMPT_OVERHEAD_TOKENS = 4096
_REQUIRED = ("input_tokens", "output_tokens")


class TokenUsage(ContractModel):
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cache_creation_input_tokens: int = Field(default=0, ge=0)
    cache_read_input_tokens: int = Field(default=0, ge=0)

    @classmethod
    def of(cls, usage: Mapping[str, Any] | None) -> TokenUsage:
        """The counted fields of a ``usage`` object, leniently (transcripts); metering uses :func:`metered_usage`."""
        fields = cls.model_fields
        return cls(**{k: v for k, v in (usage or {}).items() if k in fields and isinstance(v, int)})

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(**{k: getattr(self, k) + getattr(other, k) for k in type(self).model_fields})


def _counts(usage: object, required: Iterable[str]) -> dict[str, int] | None:
    """The counts of one usage report, or None when a required count is missing or any count is not a count."""
    if not isinstance(usage, dict):
        return None
    counts: dict[str, int] = {}
    for name in TokenUsage.model_fields:
        value = usage.get(name)
        if value is None and name not in required:
            continue  # the API sends null (or nothing) for counts it did not take
        if type(value) is not int or value < 0:
            return None
        counts[name] = value
    return counts


def metered_usage(usage: object) -> TokenUsage | None:
    """The usage a whole answer reports; None when it is missing or malformed (then the upper bound is charged)."""
    counts = _counts(usage, _REQUIRED)
    return None if counts is None else TokenUsage(**counts)


def stream_usage(start: object, deltas: Iterable[object]) -> TokenUsage | None:
    """A stream's usage: message_start's report and every message_delta's, each count at its largest.

    The counts are cumulative, so the largest is the final one; a delta that reports an input count as 0 (seen
    in recorded streams) cannot lower what message_start reported. None when any report is malformed.
    """
    reports = [_counts(start, _REQUIRED), *(_counts(delta, ("output_tokens",)) for delta in deltas)]
    if any(report is None for report in reports) or len(reports) < 2:
        return None
    names = TokenUsage.model_fields
    return TokenUsage(**{name: max(report.get(name, 0) for report in reports if report is not None) for name in names})


class Price(ContractModel):
    """USD per million tokens for one model (``cache_write`` at the cache lifetime the harness asks for)."""

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

    def upper_bound(self, request_bytes: int, max_tokens: int) -> Decimal:
        """The most an answer to a request can cost: a token is at least one byte of the request it came from."""
        dearest = max(self.input, self.cache_write, self.cache_read)
        return ((request_bytes + _PROMPT_OVERHEAD_TOKENS) * dearest + max_tokens * self.output) / _PER_MILLION


class ChargeBasis(StrEnum):
    """How an exchange's ``cost_usd`` was decided."""

    USAGE = "usage"  # the answer's reported usage at the model's price
    UPPER_BOUND = "upper-bound"  # billable, but no readable, complete usage: max_tokens and the request size
    NOT_BILLED = "not-billed"  # nothing the provider bills: a refusal, an error answer, count_tokens, policy mode


class ArmSpend(ContractModel):
    """What one arm spent at its gateway, for the arm's record and the fence's drain check."""

    arm: str = Field(min_length=1)
    cap_usd: Decimal | None  # None: the gateway spends nothing for this arm (policy mode)
    spent_usd: Decimal = Field(ge=0, allow_inf_nan=False)
    charged_answers: int = Field(ge=0)  # answers charged anything
    upper_bound_answers: int = Field(ge=0)  # of those, charged their upper bound for want of usage
    cap_refusals: int = Field(ge=0)  # requests refused because the cap was reached

    @property
    def cap_reached(self) -> bool:
        return self.cap_usd is not None and self.spent_usd >= self.cap_usd


class Meter:
    """Spending per arm label, shared by the gateway's request threads; caps come from the pair's PairCaps."""

    def __init__(self, labels: Iterable[str], caps: PairCaps | None) -> None:
        self._spend = {
            label: ArmSpend(
                arm=label,
                cap_usd=None if caps is None else caps.cap_of(label),
                spent_usd=Decimal(0),
                charged_answers=0,
                upper_bound_answers=0,
                cap_refusals=0,
            )
            for label in labels
        }
        self._lock = threading.Lock()

    def spent(self, label: str) -> Decimal:
        with self._lock:
            return self._spend[label].spent_usd

    def admit(self, label: str) -> ArmSpend | None:
        """None when ``label`` may spend more; else its spending so far, with the refusal counted."""
        with self._lock:
            spend = self._spend[label]
            if not spend.cap_reached:
                return None
            self._spend[label] = spend.model_copy(update={"cap_refusals": spend.cap_refusals + 1})
            return spend

    def charge(self, label: str, cost: Decimal, basis: ChargeBasis) -> None:
        if basis is ChargeBasis.NOT_BILLED:
            return
        with self._lock:
            spend = self._spend[label]
            self._spend[label] = spend.model_copy(
                update={
                    "spent_usd": spend.spent_usd + cost,
                    "charged_answers": spend.charged_answers + 1,
                    "upper_bound_answers": spend.upper_bound_answers + (basis is ChargeBasis.UPPER_BOUND),
                }
            )

    def report(self) -> tuple[ArmSpend, ...]:
        with self._lock:
            return tuple(self._spend.values())
