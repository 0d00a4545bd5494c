"""The money fence of one paired run: what the paired runner calls, in this order.

::

    fence = Fence(store, pair="...", config=config)
    fence.preflight(caps.pair_cap_usd)        # checks 1-3; raises FenceStopped unless all three passed
    ... first arm ...
    fence.between_arms(declared_drain)        # check 4; raises FenceStopped: the second arm never starts
    ... second arm ...

or, for a pair whose agent uses no paid provider, ``Fence(store, pair, None).not_applicable("no paid provider")``.
Each call writes its checks to the store as they are decided, then a :class:`FenceRecord` listing every check of
the pair so far, and returns that record's digest (a stop carries it on the error). A fence given the ``account``
it guards (the provider key's fingerprint) latches that account on every stop (:mod:`.account`), and an arm the
pair cap leaves no room stops it too (:meth:`Fence.stop_at_pair_cap`), with or without a quota API.

The failure modes are asymmetric on purpose. Between arms a transport error on the balance read fails open: the
pair is already paid for and one flaky GET should not abandon it, so the check is recorded as unobserved. A
rejected key fails closed: preflight proved the key good, so a 401 now means it changed under the run. At
preflight nothing has been spent yet and every check must pass; an unobserved one stops the pair there.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import TypeVar

from ..contracts import Digest, Sha256
from ..errors import ContractError, FenceError
from ..store import Store
from . import checks
from .account import RESUME_COMMAND, stop_account
from .checks import FenceFinding
from .config import FenceConfig
from .errors import FenceStopped, ProviderError, ProviderUnreachable
from .fence_record import CheckName, CheckVerdict, FenceCheck, FenceOutcome, FenceRecord
from .provider import ProviderClient

__all__ = ["Fence", "read_record"]

T = TypeVar("T")
_LATCHED = f"the account stays stopped until an operator runs `{RESUME_COMMAND}`"


class Fence:
    """The fence of one pair; ``config`` is None when the pair spends nothing (gateway policy mode)."""

    def __init__(
        self,
        store: Store,
        pair: str,
        config: FenceConfig | None,
        environ: Mapping[str, str] | None = None,
        *,
        account: Sha256 | None = None,
        resumed: Digest | None = None,
    ) -> None:
        self.store = store
        self.pair = pair
        self.config = config
        self.account = account  # latched on a stop; None: nothing to latch (a probe, or no paid provider)
        self.resumed = resumed  # the operator's decision the account spends under, named in every record
        self._environ = os.environ if environ is None else environ
        self._outcome: FenceOutcome | None = None  # of the latest record; None before the first
        self._checks: list[Digest] = []
        self._last: tuple[CheckName, FenceFinding] | None = None
        self._client: ProviderClient | None = None
        self._baseline = Decimal(0)  # the balance the headroom check saw; drain is measured from it

    def preflight(self, pair_cap: Decimal) -> Digest:
        """Checks 1-3 before anything is spent; stops at the first check that does not pass."""
        _require_amount("pair_cap", pair_cap)
        if self.config is None:
            raise ContractError(
                f"preflight of pair {self.pair!r} needs a fence config; a pair with no paid provider records "
                "not_applicable() instead"
            )
        self._require_new("preflight")
        cleared = self._preflight_checks(self.config, pair_cap)
        return self._finish(FenceOutcome.CLEARED if cleared else FenceOutcome.STOPPED)

    def between_arms(self, declared_drain: Decimal, bounded: Decimal = Decimal(0)) -> Digest:
        """Check 4: re-read the balance; a FenceStopped here means the next arm must not start. ``bounded`` is the
        part of ``declared_drain`` charged as upper bounds, not reported usage: the check is that much looser."""
        _require_amount("declared_drain", declared_drain)
        _require_amount("bounded", bounded)
        if self._outcome is not FenceOutcome.CLEARED or self._client is None:
            raise FenceError(
                CheckName.OBSERVED_DRAIN, f"the pair {self.pair!r} was not cleared by preflight; no arm may start"
            )
        baseline = self._baseline
        finding = _read(
            self._client.credits, lambda c: checks.observed_drain(baseline, c.balance_usd, declared_drain, bounded)
        )
        self._add(CheckName.OBSERVED_DRAIN, finding)
        return self._finish(FenceOutcome.STOPPED if finding.verdict is CheckVerdict.FAILED else FenceOutcome.CLEARED)

    def stop_at_pair_cap(self, arm: str, figures: Mapping[str, Decimal]) -> None:
        """Record that the pair cap leaves ``arm`` no room (``figures``: what each arm of its pairs spent, the caps
        and the room left) and stop the attempt: raises :class:`FenceStopped`, latching the account."""
        room = figures.get("room_usd")
        reason = (
            f"the {arm} arm cannot start: its pairs leave it {room} USD under the pair cap; raise pair_cap_usd "
            "above arm_cap_usd plus one answer's worst case"
        )
        self._add(CheckName.PAIR_CAP, FenceFinding(CheckVerdict.FAILED, reason, dict(figures)))
        self._finish(FenceOutcome.STOPPED)

    def not_applicable(self, reason: str = "no paid provider") -> Digest:
        """Record that this pair was deliberately not fenced, one not-applicable document per check."""
        self._require_new("not_applicable")
        for check in CheckName:
            self._add(check, FenceFinding(CheckVerdict.NOT_APPLICABLE, f"fence not applicable: {reason}"))
        return self._finish(FenceOutcome.NOT_APPLICABLE)

    def _preflight_checks(self, config: FenceConfig, pair_cap: Decimal) -> bool:
        key = self._environ.get(config.key_env, "")
        if not self._add(CheckName.KEY_IDENTITY, checks.key_identity(key, config.key_env, config.key_sha256)):
            return False
        self._client = ProviderClient(config.base_url, key, config.timeout_seconds)
        budget = _read(self._client.key_info, lambda info: checks.key_budget(info, pair_cap))
        if not self._add(CheckName.KEY_BUDGET, budget):
            return False
        reserve = config.production_reserve_usd
        headroom = _read(self._client.credits, lambda c: checks.shared_headroom(c.balance_usd, reserve, pair_cap))
        if not self._add(CheckName.SHARED_HEADROOM, headroom):
            return False
        self._baseline = headroom.observed_usd["balance_usd"]
        return True

    def _require_new(self, step: str) -> None:
        if self._checks:
            raise ContractError(
                f"{step}: the pair {self.pair!r} already has fence checks (latest outcome {self._outcome}); "
                "a pair is fenced once, with a new Fence per pair"
            )

    def _add(self, check: CheckName, finding: FenceFinding) -> bool:
        """Store one decided check right away; True when it passed."""
        document = FenceCheck(
            pair=self.pair,
            check=check,
            verdict=finding.verdict,
            observed_usd=finding.observed_usd,
            reason=finding.reason,
            checked_at=datetime.now(UTC),
        )
        self._checks.append(self.store.put_document(document))
        self._last = (check, finding)
        return finding.verdict is CheckVerdict.PASSED

    def _finish(self, outcome: FenceOutcome) -> Digest:
        """Write the record of every check so far; a stop latches the account and raises, naming the check that
        stopped the pair."""
        document = FenceRecord(pair=self.pair, outcome=outcome, checks=tuple(self._checks), resumed=self.resumed)
        record = self.store.put_document(document)
        self._outcome = outcome
        if outcome is FenceOutcome.STOPPED and self._last is not None:
            if self.account is not None:
                stop_account(self.store, self.account, record)
            check, finding = self._last
            raise FenceStopped(check, f"{finding.reason}; {_LATCHED}" if self.account else finding.reason, record)
        return record


def _read(read: Callable[[], T], judge: Callable[[T], FenceFinding]) -> FenceFinding:
    """Judge what the provider says; a transport failure is unobserved, any other provider error a failure."""
    try:
        value = read()
    except ProviderUnreachable as exc:
        return FenceFinding(CheckVerdict.UNOBSERVED, f"not observed: {exc}")
    except ProviderError as exc:
        return FenceFinding(CheckVerdict.FAILED, str(exc))
    return judge(value)


def _require_amount(name: str, value: object) -> None:
    """Money enters the fence as Decimal only: a float has already lost the exact amount."""
    if not isinstance(value, Decimal) or not value.is_finite() or value < 0:
        raise ContractError(f"{name} must be a finite, non-negative Decimal amount in USD, got {value!r}")


def read_record(store: Store, record: Digest) -> tuple[FenceRecord, tuple[FenceCheck, ...]]:
    """A fence record and its checks, in the order they ran, read back (and verified) from the store."""
    document = store.get_document(record, FenceRecord)
    return document, tuple(store.get_document(check, FenceCheck) for check in document.checks)
