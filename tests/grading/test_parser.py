"""The session JSONL parser, on real Claude Code output captured in data/."""

from __future__ import annotations

import json

import pytest
from cli_captures import captured, meta, transcript
from scenario import ANCHOR_PHRASE, FOLLOW_UP, PROMPT, RECALL_PHRASE, STARTUP_PHRASE

from bench.errors import ContractError
from bench.grading import Channel, StepSource
from bench.harness.claude_code.session_log import parse_claude_session


def test_hooked_session_shows_every_channel_with_its_provenance() -> None:
    t = transcript("with-hooks")
    injected = t.by_source(StepSource.INJECTED)
    assert [s.channel for s in injected] == [
        Channel.SESSION_START,  # once: `--resume` in print mode did not fire SessionStart again
        Channel.PROMPT_TIME_RETRIEVAL,
        Channel.ANCHOR_TRIGGERED_RECALL,
        Channel.PROMPT_TIME_RETRIEVAL,  # the hook fires again on the resumed prompt
    ]
    assert STARTUP_PHRASE in injected[0].text and RECALL_PHRASE in injected[1].text
    assert ANCHOR_PHRASE in injected[2].text
    read = next(s for s in t.steps if s.tool_calls and s.tool_calls[0].input["file_path"].endswith("/notes.txt"))
    assert injected[2].trigger_tool_use_id == read.tool_calls[0].id
    assert injected[2].index > read.index
    assert [s.trigger_tool_use_id for s in injected if s is not injected[2]] == [None, None, None]


def test_sources_follow_record_structure() -> None:
    t = transcript("without-hooks")
    assert not t.by_source(StepSource.INJECTED)
    assert [s.text for s in t.by_source(StepSource.USER)] == [PROMPT, FOLLOW_UP]
    tool_steps = t.by_source(StepSource.TOOL)
    assert len(tool_steps) == 1 and "alpha beta" in tool_steps[0].tool_results[0].text
    echo = [s for s in t.by_source(StepSource.AGENT) if RECALL_PHRASE in s.text]
    assert echo, "the policy's final answer echoes the memory phrase in an agent step"


def test_resumed_session_keeps_its_id_and_totals() -> None:
    t = transcript("with-hooks")
    assert t.session_id == meta("with-hooks")["session_id"] == meta("with-hooks")["resumed"]
    assert t.harness == "claude-code" and t.harness_version
    assert t.cost_usd is not None and t.cost_usd > 0 and t.duration_ms is not None
    streams = [json.loads(line) for line in captured("with-hooks", "stream").splitlines()]
    resumed = [json.loads(line) for line in captured("with-hooks", "resume.stream").splitlines()]
    costs = [r["total_cost_usd"] for r in streams + resumed if r["type"] == "result"]
    assert t.cost_usd == pytest.approx(sum(costs))
    assert t.started_at is not None and t.finished_at is not None and t.started_at < t.finished_at


def test_a_response_split_over_records_is_counted_once() -> None:
    t = transcript("with-hooks")
    agent = t.by_source(StepSource.AGENT)
    split = [s for s in agent if s.message_id == agent[0].message_id]
    assert len(split) == 2 and split[0].text and split[1].tool_calls  # text, then the tool call
    per_response = {s.message_id: s.usage for s in agent}
    assert t.usage.output_tokens == sum(u.output_tokens for u in per_response.values() if u)


def test_unknown_record_types_are_tolerated_and_listed() -> None:
    novel = json.dumps({"type": "hologram", "sessionId": transcript("with-hooks").session_id}).encode()
    odd_attachment = {"type": "attachment", "sessionId": transcript("with-hooks").session_id}
    odd_attachment["attachment"] = {"type": "relevant_memories", "content": "from elsewhere"}
    data = captured("with-hooks", "session") + novel + b"\n" + json.dumps(odd_attachment).encode() + b"\n"
    t = parse_claude_session(data)
    assert t.unknown_record_types == ("hologram",)
    assert t.steps[-1].source is StepSource.SYSTEM and t.steps[-1].origin == "attachment:relevant_memories"
    assert t.cost_usd is None  # no stream output given: unknown, not zero


def test_mismatched_inputs_are_refused() -> None:
    with pytest.raises(ContractError, match="stream-json output 1 is of session"):
        parse_claude_session(captured("with-hooks", "session"), [captured("without-hooks", "stream")])
    with pytest.raises(ContractError, match="line 1 is not JSON"):
        parse_claude_session(b"not json\n")
