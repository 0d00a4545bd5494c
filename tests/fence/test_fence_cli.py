"""`stele-bench fence check` against the loopback provider: one JSON object out, exit 12 when stopped."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from fence_provider_double import KEY, KEY_ENV, Account

from bench.cli import main
from bench.contracts import Digest
from bench.fence import FenceConfig, FenceOutcome, read_record
from bench.store import Store


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


@pytest.fixture
def config_file(tmp_path: Path, config: FenceConfig, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(KEY_ENV, KEY)
    path = tmp_path / "fence.json"
    path.write_text(config.model_dump_json())
    return path


def test_fence_check_prints_the_recorded_checks(
    tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store_dir = tmp_path / "store"
    argv = ["--store", str(store_dir), "--json", "fence", "check", "--config", str(config_file), "--pair-cap", "5"]
    code, data = _run(argv, capsys)
    assert code == 0 and data["outcome"] == "cleared"
    assert [c["verdict"] for c in data["checks"]] == ["passed"] * 3  # type: ignore[union-attr]
    document, checks = read_record(Store(store_dir), Digest(str(data["record"])))
    assert document.outcome is FenceOutcome.CLEARED and checks[2].observed_usd["required_usd"] == Decimal("55")


def test_fence_check_exits_12_when_the_preflight_stops(
    tmp_path: Path, config_file: Path, account: Account, capsys: pytest.CaptureFixture[str]
) -> None:
    account.limit = None
    argv = ["--store", str(tmp_path / "s"), "fence", "check", "--config", str(config_file), "--pair-cap", "5"]
    assert main(argv) == 12
    text = capsys.readouterr().out
    assert "key-budget: failed: the provider reports no limit on this key" in text and "stopped (fence record" in text


def test_fence_check_refuses_a_pair_cap_that_is_not_an_amount(
    config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fence", "check", "--config", str(config_file), "--pair-cap", "lots"]) == 2
    assert "expected a non-negative amount in USD" in capsys.readouterr().err
