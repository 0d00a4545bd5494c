"""The four checks as pure decisions over what was observed; the driver does the reading and the recording."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from decimal import Decimal

from ..contracts import Sha256
from .fence_record import CheckVerdict
from .provider import KeyInfo

__all__ = ["FenceFinding", "key_budget", "key_identity", "observed_drain", "shared_headroom"]


@dataclass(frozen=True)
class FenceFinding:
    verdict: CheckVerdict
    reason: str
    observed_usd: dict[str, Decimal] = field(default_factory=dict)


def key_identity(key: str | None, key_env: str, expected: Sha256) -> FenceFinding:
    """1. The exported key is the eval key, so the pair cannot be billed to another key (production) by accident.

    Only 12 hex digits of either fingerprint are written down: enough to tell keys apart in a record.
    """
    if not key:
        return FenceFinding(
            CheckVerdict.FAILED, f"${key_env} is not set or empty; export the eval key before a paid pair"
        )
    actual = hashlib.sha256(key.encode("utf-8")).hexdigest()
    if actual != expected:
        return FenceFinding(
            CheckVerdict.FAILED,
            f"the key in ${key_env} has SHA-256 {actual[:12]}..., expected {expected[:12]}...; "
            "export the eval key, or update key_sha256 if the eval key was rotated",
        )
    return FenceFinding(CheckVerdict.PASSED, f"the key in ${key_env} matches fingerprint {expected[:12]}...")


def key_budget(info: KeyInfo, pair_cap: Decimal) -> FenceFinding:
    """2. The provider itself caps the key, and what the cap leaves covers the whole pair, so nothing this process
    gets wrong can spend past that ceiling and the pair cannot be cut short by it halfway."""
    observed = {"usage_usd": info.usage_usd, "pair_cap_usd": pair_cap}
    if info.limit_remaining_usd is not None:
        observed["limit_remaining_usd"] = info.limit_remaining_usd
    if info.limit_usd is None:
        return FenceFinding(
            CheckVerdict.FAILED,
            "the provider reports no limit on this key (limit is null); set a credit limit on the eval key",
            observed,
        )
    observed["limit_usd"] = info.limit_usd
    if info.limit_remaining_usd is None:
        return FenceFinding(
            CheckVerdict.FAILED,
            f"the provider caps this key at {info.limit_usd} USD but reports no remaining amount "
            "(limit_remaining is null); the pair's room under the cap is unknown",
            observed,
        )
    if info.limit_remaining_usd < pair_cap:
        return FenceFinding(
            CheckVerdict.FAILED,
            f"the key's remaining limit {info.limit_remaining_usd} USD is below the pair cap {pair_cap} USD; raise "
            "the key's limit or lower the pair cap",
            observed,
        )
    return FenceFinding(
        CheckVerdict.PASSED,
        f"the provider caps this key at {info.limit_usd} USD, {info.limit_remaining_usd} USD remaining, covering "
        f"the pair cap {pair_cap} USD",
        observed,
    )


def shared_headroom(balance: Decimal, reserve: Decimal, pair_cap: Decimal) -> FenceFinding:
    """3. The shared balance covers production's reserve and the whole pair, so the pair fits before it starts."""
    required = reserve + pair_cap
    observed = {"balance_usd": balance, "reserve_usd": reserve, "pair_cap_usd": pair_cap, "required_usd": required}
    if balance < required:
        return FenceFinding(
            CheckVerdict.FAILED,
            f"the balance {balance} USD does not cover the reserve {reserve} plus the pair cap {pair_cap} "
            f"(short by {required - balance}); add credits or lower the pair cap",
            observed,
        )
    return FenceFinding(CheckVerdict.PASSED, f"the balance {balance} USD covers {required} USD", observed)


def observed_drain(
    baseline: Decimal, balance: Decimal, declared: Decimal, bounded: Decimal = Decimal(0)
) -> FenceFinding:
    """4. Between arms: the drop of the shared balance stays within what the finished arm declared.

    Over-attributing on purpose: the drop counts every spender on the account, and past the declared amount the
    next dollar comes out of the reserve whoever spends it. ``bounded`` is the part of ``declared`` that is upper
    bounds charged for want of a usage report, recorded beside it: by that much the check is looser than measured.
    """
    drained = baseline - balance
    observed = {"baseline_usd": baseline, "balance_usd": balance, "drained_usd": drained, "declared_usd": declared}
    if bounded:
        observed["declared_bounded_usd"] = bounded
    if drained > declared:
        return FenceFinding(
            CheckVerdict.FAILED,
            f"the balance dropped by {drained} USD, more than the {declared} USD declared; the next arm must not "
            "start until the account's other spending is explained",
            observed,
        )
    return FenceFinding(
        CheckVerdict.PASSED, f"the balance dropped by {drained} USD of {declared} USD declared", observed
    )
