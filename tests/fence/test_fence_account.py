"""A stopped account stays stopped (issue 32): every stop of a fence that guards an account latches it, a later
fence of the same key fingerprint is refused before it spends, and only an operator's recorded decision
(`stele-bench fence resume --reason`) lifts the latch; the fence records spent under it name that decision."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest
from fence_provider_double import KEY, KEY_ENV, Account

from bench.cli import main
from bench.contracts import Digest
from bench.errors import FenceError
from bench.fence import (
    AccountStopped,
    CheckName,
    CheckVerdict,
    Fence,
    FenceConfig,
    FenceOutcome,
    FenceResume,
    FenceStopped,
    open_account,
    read_record,
    stopped_accounts,
)
from bench.store import Store


@pytest.fixture
def guarded(store: Store, config: FenceConfig) -> Callable[..., Fence]:
    """A fence that guards the eval key's account, asking the latch first as an attempt does."""

    def make(pair: str = "c.1") -> Fence:
        resumed = open_account(store, config.key_sha256)
        return Fence(store, pair, config, {KEY_ENV: KEY}, account=config.key_sha256, resumed=resumed)

    return make


def _resume(store: Store, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict[str, object]]:
    code = main(["--store", str(store.location), "--json", "fence", "resume", *extra])
    return code, json.loads(capsys.readouterr().out)


def test_a_drain_stop_latches_the_account_until_an_operator_resumes_it(
    store: Store,
    guarded: Callable[..., Fence],
    config: FenceConfig,
    account: Account,
    capsys: pytest.CaptureFixture[str],
) -> None:
    account.limit = Decimal("50")
    fence = guarded()
    fence.preflight(Decimal("5"))
    account.spend("9")  # someone else spent on the account while the first arm ran
    with pytest.raises(FenceStopped, match="fence resume --reason") as stopped:
        fence.between_arms(Decimal("1"), bounded=Decimal("0.25"))
    _, checks = read_record(store, stopped.value.record)
    assert checks[-1].observed_usd["declared_bounded_usd"] == Decimal("0.25")  # how much of it was a bound
    assert stopped_accounts(store) == {config.key_sha256: stopped.value.record}
    requests = len(account.requests)
    with pytest.raises(AccountStopped) as refused:  # a later attempt, same key: refused before any request
        guarded("c.2")
    assert refused.value.exit_code == 12 and isinstance(refused.value, FenceError)
    assert "stele-bench fence resume --reason TEXT" in str(refused.value) and stopped.value.record in str(refused.value)
    assert len(account.requests) == requests

    code, data = _resume(store, capsys, "--reason", "the other spender was the nightly job; reserve raised")
    assert code == 0 and data["stop"] == stopped.value.record and stopped_accounts(store) == {}
    decision = store.get_document(Digest(str(data["decision"])), FenceResume)
    assert decision.stop == stopped.value.record and decision.account == config.key_sha256
    assert decision.reason == "the other spender was the nightly job; reserve raised"

    record = guarded("c.2").preflight(Decimal("5"))
    document, _ = read_record(store, record)
    assert document.outcome is FenceOutcome.CLEARED and document.resumed == data["decision"]  # it names the decision


def test_a_pair_cap_stop_writes_a_stopped_record_with_its_figures_and_latches(
    store: Store, guarded: Callable[..., Fence], config: FenceConfig
) -> None:
    fence = guarded()
    fence.preflight(Decimal("5"))
    figures = {"control_spent_usd": Decimal("2"), "pair_cap_usd": Decimal("2"), "room_usd": Decimal("0")}
    with pytest.raises(FenceStopped) as stopped:
        fence.stop_at_pair_cap("reference", figures)
    document, checks = read_record(store, stopped.value.record)
    assert document.outcome is FenceOutcome.STOPPED and stopped.value.check == CheckName.PAIR_CAP
    assert (checks[-1].check, checks[-1].verdict, checks[-1].observed_usd) == (
        CheckName.PAIR_CAP,
        CheckVerdict.FAILED,
        figures,
    )
    assert checks[-1].checked_at is not None and "the reference arm cannot start" in checks[-1].reason
    assert stopped_accounts(store) == {config.key_sha256: stopped.value.record}


def test_an_unfenced_account_is_latched_by_its_key_fingerprint_too(store: Store, config: FenceConfig) -> None:
    """No quota API: the fence records not-applicable, and a pair-cap stop still writes its record and latches."""
    fence = Fence(store, "c.1", None, account=config.key_sha256)
    fence.not_applicable("the provider has no quota API")
    with pytest.raises(FenceStopped) as stopped:
        fence.stop_at_pair_cap("control", {"room_usd": Decimal("-0.01")})
    document, checks = read_record(store, stopped.value.record)
    assert document.outcome is FenceOutcome.STOPPED and [c.verdict for c in checks][-2:] == [
        CheckVerdict.NOT_APPLICABLE,
        CheckVerdict.FAILED,
    ]
    with pytest.raises(AccountStopped):
        open_account(store, config.key_sha256)


def test_a_probe_without_an_account_latches_nothing(
    store: Store, make_fence: Callable[..., Fence], account: Account
) -> None:
    """`fence check` is the operator's probe: its stop is recorded, and latches no account."""
    account.limit = None
    with pytest.raises(FenceStopped):
        make_fence().preflight(Decimal("5"))
    assert stopped_accounts(store) == {}


def test_resume_refuses_without_a_stopped_account_a_reason_or_a_unique_key(
    store: Store, guarded: Callable[..., Fence], account: Account, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    fence = guarded()
    store.put_bytes(b"")  # the store exists
    assert main(["--store", str(store.location), "fence", "resume", "--reason", "why not"]) == 2
    assert "0 stopped account(s)" in capsys.readouterr().err
    account.reject_key = True
    with pytest.raises(FenceStopped):
        fence.preflight(Decimal("5"))  # a preflight stop latches as well
    assert main(["--store", str(store.location), "fence", "resume", "--reason", "   "]) == 2
    assert "--reason must say" in capsys.readouterr().err
    assert main(["--store", str(store.location), "fence", "resume", "--reason", "ok", "--key", "ffff"]) == 2
    assert "0 stopped account(s) match --key 'ffff'" in capsys.readouterr().err
    assert len(stopped_accounts(store)) == 1
