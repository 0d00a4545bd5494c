"""Token usage, prices and the per-arm spending meter of the gateway.

Cost is computed from the usage an answer reports, with the runner's price table, never from a client's own
estimate, and in exact decimals. An answer the provider may have billed but whose usage is missing, malformed or
cut short is charged its upper bound (every request byte a token at the dearest input rate, plus ``max_tokens``
of output), never zero, and its record says so.

A cap is a hard bound. A request is forwarded only when what the arm spent, plus the worst case of every request
still in flight, plus this request's own worst case (its upper bound) fits the arm's cap; the worst case is held
until the answer is charged. An answer is never charged more than its request's upper bound: a reported usage
beyond the request's own bounds (more output than ``max_tokens``, more input than the request can hold) is
malformed, charged the bound, and stops the arm (``provider-malformed``). So spent <= cap always.

A provider that keeps failing is the provider's failure, not the agent's: after the preregistered number of
consecutive provider errors (401/403/429, 5xx, unreachable, a stream cut or ended by an ``error`` event) the arm
stops (``provider-failed``), and every later request of that arm is refused before it reaches the provider.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from decimal import Decimal
from enum import StrEnum

from pydantic import Field

from ..contracts import ContractModel
from ..contracts.usage import TokenUsage
from ..errors import ContractError
from ..fence import PairCaps

__all__ = [
    "DEFAULT_PROVIDER_ERROR_LIMIT",
    "ArmSpend",
    "ArmStop",
    "ChargeBasis",
    "Meter",
    "Price",
    "TokenUsage",
    "metered_usage",
    "stream_usage",
]

_PER_MILLION = 1_000_000
# Tokens the API adds to a prompt beyond the request's own bytes (the tool-use system prompt is a few hundred):
# generous, since it only ever raises an upper bound.
_PROMPT_OVERHEAD_TOKENS = 4096
_REQUIRED = ("input_tokens", "output_tokens")
DEFAULT_PROVIDER_ERROR_LIMIT = 3  # consecutive provider errors that end an arm, unless preregistered otherwise


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
        """The most an answer to a request can cost (its worst case): every input token, however the provider splits
        them between plain input and cache writes and reads, at the dearest input rate, a token being at least one
        byte of the request it came from, and ``max_tokens`` of output."""
        dearest = max(self.input, self.cache_write, self.cache_read)
        return (_input_bound(request_bytes) * dearest + max_tokens * self.output) / _PER_MILLION


def _input_bound(request_bytes: int) -> int:
    return request_bytes + _PROMPT_OVERHEAD_TOKENS


def within_bounds(usage: TokenUsage, request_bytes: int, max_tokens: int) -> bool:
    """Whether a reported usage is one the request allows: no more output than ``max_tokens``, no more input (plain,
    cache writes and reads together) than the request can hold. Outside them the report is malformed."""
    taken = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
    return usage.output_tokens <= max_tokens and taken <= _input_bound(request_bytes)


class ChargeBasis(StrEnum):
    """How an exchange's ``cost_usd`` was decided."""

    USAGE = "usage"  # the answer's reported usage at the model's price
    UPPER_BOUND = "upper-bound"  # billable, but no readable, complete usage: max_tokens and the request size
    OUT_OF_BOUNDS = "out-of-bounds"  # a usage beyond the request's bounds: malformed, charged the upper bound
    NOT_BILLED = "not-billed"  # nothing the provider bills: a refusal, an error answer, count_tokens, policy mode


class ArmStop(StrEnum):
    """Why the gateway stopped serving an arm for its provider's fault; every later request of the arm is refused."""

    PROVIDER_FAILED = "provider-failed"  # the preregistered number of consecutive provider errors
    PROVIDER_MALFORMED = "provider-malformed"  # an answer reported usage beyond what its request allows


class ArmSpend(ContractModel):
    """What one arm spent at its gateway, for the arm's record and the fence's drain check."""

    arm: str = Field(min_length=1)
    cap_usd: Decimal | None  # None: the gateway spends nothing for this arm (policy mode)
    spent_usd: Decimal = Field(ge=0, allow_inf_nan=False)
    charged_answers: int = Field(ge=0)  # answers charged anything
    upper_bound_answers: int = Field(ge=0)  # of those, charged their upper bound: no usage, or one out of bounds
    bounded_usd: Decimal = Field(default=Decimal(0), ge=0, allow_inf_nan=False)  # what those were charged
    cap_refusals: int = Field(ge=0)  # requests refused because their worst case did not fit under the cap
    stop: ArmStop | None = None  # the gateway stopped the arm for its provider's fault
    provider_errors: int = Field(default=0, ge=0)  # consecutive provider errors, as of the latest answer
    stop_refusals: int = Field(default=0, ge=0)  # requests refused because the arm was stopped

    @property
    def cap_reached(self) -> bool:
        """A request was refused because what it could cost did not fit under the cap."""
        return self.cap_refusals > 0


class Meter:
    """Spending per arm label, shared by the gateway's request threads; caps come from the pair's PairCaps.

    :meth:`admit` holds a request's worst case against its arm's cap; :meth:`settle` replaces the hold with what
    the answer is charged, which is never more than the hold, so an arm's spending never passes its cap.
    """

    def __init__(
        self, labels: Iterable[str], caps: PairCaps | None, provider_error_limit: int = DEFAULT_PROVIDER_ERROR_LIMIT
    ) -> None:
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
        self._held = dict.fromkeys(self._spend, Decimal(0))  # worst cases of the requests in flight
        self._in_flight = dict.fromkeys(self._spend, 0)
        self._limit = provider_error_limit
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)  # notified whenever a hold is released

    def spent(self, label: str) -> Decimal:
        with self._lock:
            return self._spend[label].spent_usd

    def admit(self, label: str, worst_case: Decimal) -> ArmSpend | None:
        """None when ``label`` may send a request that can cost up to ``worst_case`` (held until :meth:`settle`);
        else its spending so far, with the refusal counted: ``stop`` set when the arm was stopped, else the cap.

        A request waits for its arm's requests in flight to settle when their answers decide it: when it does not
        fit beside their holds (worst cases, mostly released), or when their errors could complete the run that
        stops the arm. A client that sends its next request as soon as it has read an answer is then decided
        as if the answer had been settled first, which is when the gateway could have decided it."""
        with self._settled:
            while True:
                spend, held, flying = self._spend[label], self._held[label], self._in_flight[label]
                if spend.stop is not None:
                    refused = spend.model_copy(update={"stop_refusals": spend.stop_refusals + 1})
                    break
                fits = spend.cap_usd is None or spend.spent_usd + held + worst_case <= spend.cap_usd
                if flying and (not fits or spend.provider_errors + flying >= self._limit):
                    self._settled.wait()
                    continue
                if not fits:
                    refused = spend.model_copy(update={"cap_refusals": spend.cap_refusals + 1})
                    break
                self._held[label], self._in_flight[label] = held + worst_case, flying + 1
                return None
            self._spend[label] = refused
            return refused

    def settle(
        self, label: str, worst_case: Decimal, cost: Decimal, basis: ChargeBasis, provider_error: bool = False
    ) -> None:
        """Release an admitted request's hold and charge its answer; stop the arm when the answer was out of bounds
        or ended the run of provider errors the limit allows."""
        if cost > worst_case:  # every basis charges at most the upper bound the request was admitted with
            raise ContractError(f"an answer of arm {label!r} charged {cost} USD, more than its hold {worst_case} USD")
        with self._lock:
            self._held[label] -= worst_case
            self._in_flight[label] -= 1
            spend = self._spend[label]
            errors = spend.provider_errors + 1 if provider_error else 0
            stop = spend.stop
            if stop is None and basis is ChargeBasis.OUT_OF_BOUNDS:
                stop = ArmStop.PROVIDER_MALFORMED
            elif stop is None and errors >= self._limit:
                stop = ArmStop.PROVIDER_FAILED
            billed = basis is not ChargeBasis.NOT_BILLED
            bounded = basis in (ChargeBasis.UPPER_BOUND, ChargeBasis.OUT_OF_BOUNDS)
            self._spend[label] = spend.model_copy(
                update={
                    "spent_usd": spend.spent_usd + (cost if billed else 0),
                    "charged_answers": spend.charged_answers + billed,
                    "upper_bound_answers": spend.upper_bound_answers + bounded,
                    "bounded_usd": spend.bounded_usd + (cost if bounded else 0),
                    "provider_errors": errors,
                    "stop": stop,
                }
            )
            self._settled.notify_all()

    def report(self) -> tuple[ArmSpend, ...]:
        with self._lock:
            return tuple(self._spend.values())
