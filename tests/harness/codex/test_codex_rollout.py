"""A rollout file the real CLI wrote (data/rollout.jsonl: a fresh and a resumed step with an instructions file, a
prompt hook, a tool hook and an MCP call) read into the common transcript; bad input refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.errors import ContractError
from bench.grading.delivered import hook_of
from bench.harness.codex.rollout import parse_rollout
from bench.harness.transcript import Channel, StepSource

DATA = Path(__file__).parent / "data"
ROLLOUT = (DATA / "rollout.jsonl").read_bytes()
STREAMS = [(DATA / "exec.jsonl").read_bytes(), (DATA / "resume.jsonl").read_bytes()]


def test_the_recorded_rollout_reads_step_by_step() -> None:
    transcript = parse_rollout(ROLLOUT, "rollout.jsonl", STREAMS)
    assert transcript.session_id == "01a246ae-84b2-75c0-870f-27741d120bc9"
    assert transcript.harness == "codex" and transcript.harness_version == "0.169.0" and transcript.runs == 2
    assert [s.text for s in transcript.by_source(StepSource.USER)] == ["make a file", "ask notes"]
    assert [s.text for s in transcript.steps if s.source is StepSource.AGENT and s.text] == ["done one", "done two"]
    names = [call.name for step in transcript.steps for call in step.tool_calls]
    assert names == ["apply_patch", "exec_command", "mcp__notes__envdump"]
    injected = [(s.channel, s.text, s.trigger_tool_use_id) for s in transcript.by_source(StepSource.INJECTED)]
    assert injected == [
        (Channel.STATIC_CONTEXT, "Prefer tabs.", None),  # the file's contents, as grading reads them in a request
        (Channel.PROMPT_TIME_RETRIEVAL, "HOOK-CONTEXT-UserPromptSubmit-", None),
        (Channel.ANCHOR_TRIGGERED_RECALL, "HOOK-CONTEXT-PostToolUse-apply_patch", "call_000003"),
        (Channel.ANCHOR_TRIGGERED_RECALL, "HOOK-CONTEXT-PostToolUse-Bash", "call_000006"),
        (Channel.PROMPT_TIME_RETRIEVAL, "HOOK-CONTEXT-UserPromptSubmit-", None),
        (Channel.ANCHOR_TRIGGERED_RECALL, "HOOK-CONTEXT-PostToolUse-mcp__notes__envdump", "call_000003"),
    ]
    # each named as grading names the context at that place in a request: the hook (its tool as hooks name it), the file
    assert [hook_of(s) for s in transcript.by_source(StepSource.INJECTED)] == [
        "/home/dev/.codex/AGENTS.md",
        "UserPromptSubmit",
        "PostToolUse:apply_patch",
        "PostToolUse:Bash",
        "UserPromptSubmit",
        "PostToolUse:mcp__notes__envdump",
    ]
    # no status is recorded: every server the settings announce is connected in each run (required = true)
    assert [(s.step, s.name, s.status) for s in transcript.servers] == [
        (0, "notes", "connected"),
        (1, "notes", "connected"),
    ]
    assert transcript.usage.input_tokens == 555 and transcript.usage.output_tokens == 35
    assert transcript.duration_ms == 662 and transcript.unknown_record_types == ()


def test_a_tool_output_quoting_hook_text_stays_a_tool_result() -> None:
    transcript = parse_rollout(ROLLOUT, "rollout.jsonl")
    mcp = next(s for s in transcript.by_source(StepSource.TOOL) if "HOME" in s.tool_results[0].text)
    assert mcp.channel is None and mcp.tool_results[0].tool_use_id == "call_000003"


def test_unknown_record_types_are_tolerated_and_listed() -> None:
    extra = json.dumps({"timestamp": "t", "type": "brand_new_record", "payload": {}}).encode()
    transcript = parse_rollout(ROLLOUT + extra + b"\n", "rollout.jsonl")
    assert transcript.unknown_record_types == ("brand_new_record",)


def test_a_malformed_line_is_refused_naming_file_and_line() -> None:
    lines = ROLLOUT.splitlines()
    broken = b"\n".join([*lines[:4], b"{not json", *lines[4:]])
    with pytest.raises(ContractError, match=r"^rollout-x\.jsonl line 5 is not JSON") as caught:
        parse_rollout(broken, "rollout-x.jsonl")
    assert "\n" not in str(caught.value)
    with pytest.raises(ContractError, match=r"rollout-x\.jsonl line 1 is a JSON list, not an object"):
        parse_rollout(b"[1]\n", "rollout-x.jsonl")


def test_a_stream_of_another_thread_is_refused() -> None:
    other = b'{"type":"thread.started","thread_id":"ffff"}\n'
    with pytest.raises(ContractError, match="--json output 2 is of thread ffff"):
        parse_rollout(ROLLOUT, "rollout.jsonl", [STREAMS[0], other])


def test_a_file_of_two_threads_is_refused() -> None:
    meta = json.dumps({"type": "session_meta", "payload": {"id": "another"}}).encode()
    with pytest.raises(ContractError, match="holds one thread"):
        parse_rollout(ROLLOUT + meta + b"\n", "rollout.jsonl")
