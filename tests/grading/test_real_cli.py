"""The real Claude Code CLI, run on this host as a non-root user against the gateway on loopback.

Never skipped: a missing CLI fails with the install command. Both arms share the workspace, the prompt and the
policy; only the memory hooks differ, so every difference below was caused by what the harness delivered.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from decimal import Decimal

import pytest
from capture import API_KEY, ArmCapture, capture_arm, policy_gateway_config, scratch_dirs
from claude_host import Home, require_claude, run_claude
from cli_captures import MEMORY
from scenario import (
    ANCHOR_PHRASE,
    ANCHORED_FILE,
    FOLLOW_UP,
    PROMPT,
    RECALL_PHRASE,
    STARTUP_PHRASE,
    policy_for,
    write_workspace,
)

from bench.fence import ArmCap, PairCaps
from bench.gateway import (
    ArmKey,
    DirectoryRecorder,
    ExchangeRecord,
    ForwardTerms,
    Gateway,
    GatewayConfig,
    Mode,
    Price,
    read_exchanges,
)
from bench.grading import (
    Channel,
    MemoryDeclaration,
    OutcomeGrade,
    RunnerRecord,
    StepSource,
    grade,
)
from bench.harness.claude_code.session_log import parse_claude_session

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

PASSED = OutcomeGrade(verifier_passed=True, audit_clean=True)


@pytest.fixture(scope="module")
def hooked() -> ArmCapture:
    require_claude()
    return capture_arm(True)


@pytest.fixture(scope="module")
def plain() -> ArmCapture:
    require_claude()
    return capture_arm(False)


def _grade(arm: ArmCapture, memory: MemoryDeclaration = MEMORY):  # type: ignore[no-untyped-def]
    transcript = parse_claude_session(arm.session, [arm.stream, arm.resume_stream])
    exchanges = [ExchangeRecord.model_validate_json(line) for line in arm.exchanges.splitlines()]
    runner = RunnerRecord(prompts=(PROMPT, FOLLOW_UP), cwd=arm.workspace)
    return transcript, grade(transcript, exchanges, memory, PASSED, runner)


def test_resume_keeps_the_native_session(hooked: ArmCapture) -> None:
    assert hooked.resumed_session_id == hooked.session_id
    transcript, _ = _grade(hooked)
    assert len(transcript.by_source(StepSource.USER)) == 2


def test_hooked_arm_delivers_through_every_channel_and_acts_on_the_anchor(hooked: ArmCapture) -> None:
    _, graded = _grade(hooked)
    assert graded.delivered.channel(Channel.PROMPT_TIME_RETRIEVAL).phrases == (RECALL_PHRASE,)
    assert graded.delivered.channel(Channel.ANCHOR_TRIGGERED_RECALL).phrases == (ANCHOR_PHRASE,)
    assert graded.delivered.channel(Channel.SESSION_START).phrases == (STARTUP_PHRASE,)
    assert graded.delivered.gateway_agrees and graded.delivered.tampered == ()
    assert [e.marker for e in graded.used.evidence] == [ANCHORED_FILE]


def test_plain_arm_shows_no_delivery_despite_the_agent_echo(plain: ArmCapture) -> None:
    transcript, graded = _grade(plain)
    assert any(RECALL_PHRASE in s.text for s in transcript.by_source(StepSource.AGENT))
    assert not graded.delivered.delivered and graded.delivered.received_by_model == ()
    assert graded.delivered.gateway_agrees and not graded.used.used and graded.delivered.tampered == ()
    assert graded.effort.tool_calls == 1


def test_a_workspace_claude_md_reaches_the_model() -> None:
    phrase = "orchid rotation protocol"
    require_claude()
    arm = capture_arm(False, {"CLAUDE.md": f"# Project notes\nAlways follow the {phrase}.\n"})
    _, graded = _grade(arm, MemoryDeclaration(phrases=(phrase,)))
    assert graded.delivered.received_by_model == (phrase,)  # what the model was sent says so
    assert not graded.delivered.delivered and graded.delivered.outside_channels == ()
    assert phrase.encode() not in arm.session  # the session JSONL never records it: only the gateway log does


def test_missing_cli_fails_with_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    with pytest.raises(pytest.fail.Exception, match="npm install -g @anthropic-ai/claude-code"):
        require_claude()


def test_forward_mode_relays_for_the_real_cli_and_its_cap_stops_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Provider stand-in: a policy-mode gateway. The cap lets requests through while their worst case (about $0.93
    each: the CLI's max_tokens 32,000 of output and its ~110 KB requests) fits, then refuses one: here the second."""
    require_claude()
    monkeypatch.setenv("PROVIDER_KEY", "sk-provider")
    sonnet = Price(
        input=Decimal("3"), output=Decimal("15"), cache_write=Decimal("3.75"), cache_read=Decimal("0.3")
    )  # the CLI's own price for this model
    with scratch_dirs() as dirs:
        write_workspace(dirs["ws"])
        home = Home.create(None)
        provider_dir, forward_dir = dirs["gw"] / "provider", dirs["gw"] / "forward"
        provider_dir.mkdir()
        provider_config = policy_gateway_config(policy_for(dirs["ws"]), provider_dir, key="sk-provider")
        with Gateway(provider_config, DirectoryRecorder(provider_dir / "log"), policy_root=provider_dir) as provider:
            key_digest = hashlib.sha256(API_KEY.encode()).hexdigest()
            config = GatewayConfig(
                mode=Mode.FORWARD,
                arms=(ArmKey(label="arm", key_sha256=key_digest),),
                caps=PairCaps(arms=(ArmCap(arm="arm", cap_usd=Decimal("1.0")),)),
                upstream=provider.url,
                forward=ForwardTerms(key_env="PROVIDER_KEY", prices={"claude-sonnet-4-5": sonnet}),
            )
            with Gateway(config, DirectoryRecorder(forward_dir / "log")) as gateway:
                run = run_claude(dirs["ws"], home, gateway.url, API_KEY, PROMPT, check=False)
                spent = gateway.spent("arm")
        shutil.rmtree(home.path)
        records = [r for r in read_exchanges(forward_dir / "log") if r.path.startswith("/v1/messages")]
    result = [json.loads(line) for line in run.stream.splitlines()][-1]
    assert [r.status for r in records] == [200, 400]
    assert run.returncode == 1 and result["is_error"] and result["api_error_status"] == 400
    assert "spending cap" in result["result"]
    assert spent == records[0].cost_usd  # exact: the meter and the record add the same Decimals
    assert records[1].worst_case_usd is not None and spent <= Decimal("1.0") < spent + records[1].worst_case_usd
    assert float(spent) == pytest.approx(result["total_cost_usd"])  # the CLI reports its own cost as a float
