"""A stopped account stays stopped: every fence stop latches its account, and only an operator's decision lifts it.

A stop says the account is not in the state the fence proved (a check failed, or an attempt's arms reached the pair
cap), so no later attempt may spend against that provider key either, whatever command runs it. The latch is one
ref per key fingerprint, ``fence/accounts/<sha256>``, naming the FenceRecord of the latest stop or, once an operator
ran ``stele-bench fence resume --reason TEXT``, the :class:`~.fence_record.FenceResume` that lifted it. Every paid
attempt asks before it spends (:func:`open_account`); the fence records of an attempt spending under a decision
name it, so the decision travels into every bundle that attempt is published in.
"""

from __future__ import annotations

from datetime import UTC, datetime

from ..contracts import Digest, Sha256
from ..contracts.strict_json import parse_json
from ..errors import FenceError, UsageError
from ..store import Store
from .fence_record import FenceResume

__all__ = ["AccountStopped", "open_account", "resume_account", "stop_account", "stopped_accounts"]

_PREFIX = "fence/accounts/"
RESUME_COMMAND = "stele-bench fence resume --reason TEXT"


class AccountStopped(FenceError):
    """A paid attempt was refused before spending: a fence stop latched its provider key's account."""

    def __init__(self, account: str, record: Digest) -> None:
        super().__init__(
            "stopped-account",
            f"the account of provider key {account[:12]}... was stopped by fence record {record}; nothing is spent "
            f"against it until an operator, having looked at that record, runs `{RESUME_COMMAND}`",
        )
        self.account = account
        self.record = record


def _latest(store: Store, account: str) -> tuple[Digest, bool] | None:
    """The document the account's ref names and whether it is a stop (else a resume decision); None: never set."""
    named = store.get_ref(_PREFIX + account)
    if named is None:
        return None
    data = store.get_bytes(named)
    parsed = parse_json(data, f"the document {named} of ref {_PREFIX + account}", max_bytes=len(data))
    kind = parsed.get("kind") if isinstance(parsed, dict) else None
    return named, kind != FenceResume.model_fields["kind"].default


def open_account(store: Store, account: Sha256) -> Digest | None:
    """Refuse (:class:`AccountStopped`) an account a stop latched; else the resume decision it spends under."""
    latest = _latest(store, account)
    if latest is None:
        return None
    named, stopped = latest
    if stopped:
        raise AccountStopped(account, named)
    return named


def stop_account(store: Store, account: Sha256, record: Digest) -> None:
    """Latch ``account`` stopped by the FenceRecord ``record``; a later stop replaces an earlier one."""
    store.set_ref(_PREFIX + account, record)


def stopped_accounts(store: Store) -> dict[Sha256, Digest]:
    """Every stopped account, by key fingerprint, with the FenceRecord of its stop."""
    found: dict[Sha256, Digest] = {}
    for name in sorted(store.refs()):
        if name.startswith(_PREFIX):
            account = Sha256(name.removeprefix(_PREFIX))
            latest = _latest(store, account)
            if latest is not None and latest[1]:
                found[account] = latest[0]
    return found


def resume_account(store: Store, account: Sha256, reason: str) -> Digest:
    """Record the operator's decision to lift ``account``'s stop; refused when the account is not stopped, or when
    another stop latched it while deciding (the decision must be about the stop the operator looked at)."""
    latest = _latest(store, account)
    if latest is None or not latest[1]:
        raise UsageError(f"the account of provider key {account[:12]}... is not stopped; there is nothing to resume")
    stop = latest[0]
    decision = store.put_document(FenceResume(account=account, stop=stop, reason=reason, resumed_at=datetime.now(UTC)))
    if not store.compare_and_set_ref(_PREFIX + account, stop, decision):
        raise UsageError(
            f"the account of provider key {account[:12]}... was stopped again while resuming; look at its new stop "
            f"and run `{RESUME_COMMAND}` again"
        )
    return decision
