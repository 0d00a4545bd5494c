"""The real Claude Code CLI through a forward-mode gateway to the provider double, whose model never finishes.

Each answer thinks (a signed thinking block) and asks for one more tool call; the arm's cap is what stops it: the
first request whose worst case (its bytes at the dearest input rate and the CLI's max_tokens, 32,000, of output:
about $0.93) does not fit what is left. A missing CLI fails the test with the command that installs it: these tests
exist to catch a CLI that changed.
"""

from __future__ import annotations

import itertools
import json
import shutil
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from loopback import KEY, KEY_ENV, MODEL, PRICE, PROVIDER_KEY, AnthropicDouble, Reply, arm, caps, serve_double

from bench.gateway import (
    ChargeBasis,
    DirectoryRecorder,
    ForwardTerms,
    Gateway,
    GatewayConfig,
    MessageChain,
    Mode,
    Refusal,
    read_exchanges,
)

sys.path.insert(0, str(Path(__file__).parents[1] / "grading"))
from claude_host import Home, make_dir, run_claude

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

CAP = Decimal("1.2")


def thinking_tool_loop(body: dict[str, Any]) -> Reply:
    turn = sum(1 for message in body["messages"] if message["role"] == "assistant")
    return Reply(
        (
            {"type": "thinking", "thinking": f"Turn {turn}: one more check.", "signature": f"EqQBsig{turn:04d}=="},
            {"type": "tool_use", "id": f"toolu_{turn:04d}", "name": "Bash", "input": {"command": "true"}},
        )
    )


def test_the_cap_stops_the_real_cli_whose_model_keeps_asking_for_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, PROVIDER_KEY)
    double = AnthropicDouble(model=thinking_tool_loop)
    workspace, logs = make_dir("ws-"), make_dir("gw-")
    home = Home.create(None)
    try:
        with serve_double(double) as url:
            config = GatewayConfig(
                mode=Mode.FORWARD, arms=(arm("arm", KEY),), upstream=url,
                forward=ForwardTerms(key_env=KEY_ENV, prices={MODEL: PRICE}), caps=caps(arm=str(CAP)),
            )  # fmt: skip
            with Gateway(config, DirectoryRecorder(logs)) as gateway:
                run = run_claude(workspace, home, gateway.url, KEY, "Check the build until it passes.", check=False)
        records = read_exchanges(logs)
    finally:
        for path in (workspace, logs, home.path):
            shutil.rmtree(path, ignore_errors=True)
    result = [json.loads(line) for line in run.stream.splitlines()][-1]
    assert run.returncode == 1 and result["is_error"] and "spending cap" in result["result"]
    turns = [r for r in records if r.method == "POST" and r.status == 200]
    assert len(turns) >= 2 and records[-1].refusal is Refusal.CAP_REACHED
    assert [r.refusal for r in records if r.method == "HEAD"] == [Refusal.NO_KEY]  # the CLI's keyless probe
    spent = gateway.spent("arm")
    assert spent == sum((r.cost_usd for r in turns), Decimal(0)) <= CAP  # a hard bound: never past the cap
    assert records[-1].worst_case_usd is not None and spent + records[-1].worst_case_usd > CAP  # refused: no room
    assert all(r.worst_case_usd is not None and r.cost_usd <= r.worst_case_usd for r in turns)
    assert all(r.charge is ChargeBasis.USAGE for r in turns) and double.billed_usd == spent
    assert len(double.received) == len(turns)  # the refused request never reached the provider
    # the signed thinking block is recorded whole, and the CLI sent it back: the next request continues the chain
    for before, after in itertools.pairwise(turns):
        assert before.response_body["content"][0]["signature"].startswith("EqQBsig")  # type: ignore[index]
        chain, following = before.chain, after.chain
        assert chain is not None and following is not None and chain.reply is not None
        assert following.messages[: len(chain.messages) + 1] == (*chain.messages, chain.reply)
    assert isinstance(turns[0].chain, MessageChain)
