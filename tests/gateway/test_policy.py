from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from loopback import POLICY, request_body
from pydantic import ValidationError

from bench.contracts import Sha256
from bench.gateway import GatewayError, Policy, PolicyDigestMismatch, load_policy
from bench.gateway.dialects.anthropic import AnthropicMessages

MESSAGES = AnthropicMessages()


def policy() -> Policy:
    return Policy.model_validate_json(json.dumps(POLICY))


def test_first_matching_rule_wins_and_default_answers_the_rest() -> None:
    rule, message, _ = MESSAGES.answer(policy(), request_body("please remember the ledger"))
    assert rule == "recall-seen" and message["stop_reason"] == "tool_use"
    assert message["content"][0]["input"] == {"file_path": "/w/ledger.py"}
    rule, message, _ = MESSAGES.answer(policy(), request_body("nothing special"))
    assert rule == "default" and message["stop_reason"] == "end_turn"


def test_phrase_in_an_assistant_turn_does_not_match() -> None:
    body = request_body("hello")
    body["messages"] += [{"role": "assistant", "content": "I remember the ledger"}, {"role": "user", "content": "go"}]
    assert MESSAGES.answer(policy(), body)[0] == "default"


def test_turn_lacks_and_tool_result_conditions() -> None:
    rules = {
        "rules": [
            {"name": "t2", "when": {"turn": 2, "lacks": ["stop"]}, "reply": [{"type": "text", "text": "two"}]},
            {"name": "res", "when": {"tool_result_seen": True}, "reply": [{"type": "text", "text": "r"}]},
        ],
        "default": [{"type": "text", "text": "d"}],
    }
    chosen = Policy.model_validate_json(json.dumps(rules))
    body = request_body("go")
    result = {"type": "tool_result", "tool_use_id": "x", "content": "out"}
    body["messages"] += [{"role": "assistant", "content": "a"}, {"role": "user", "content": [result]}]
    assert MESSAGES.answer(chosen, body)[0] == "t2"
    body["messages"][-1]["content"].append({"type": "text", "text": "stop"})
    assert MESSAGES.answer(chosen, body)[0] == "res"
    assert MESSAGES.answer(chosen, request_body("go"))[0] == "default"


def test_same_request_same_reply_ids() -> None:
    first = MESSAGES.answer(policy(), request_body("remember the ledger"))[1]
    again = MESSAGES.answer(policy(), request_body("remember the ledger"))[1]
    other = MESSAGES.answer(policy(), request_body("remember the ledger twice"))[1]
    assert first == again and first["content"][0]["id"] != other["content"][0]["id"]


def test_a_policy_without_default_is_refused() -> None:
    with pytest.raises(ValidationError, match="default"):
        Policy.model_validate_json(json.dumps({"rules": []}))


def test_load_refuses_bytes_other_than_the_pinned_ones(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(POLICY))
    pinned = Sha256(hashlib.sha256(path.read_bytes()).hexdigest())
    assert load_policy(path, pinned).default == policy().default
    path.write_text(json.dumps(POLICY) + " ")
    with pytest.raises(PolicyDigestMismatch) as caught:
        load_policy(path, pinned)
    assert caught.value.expected == pinned and caught.value.actual != pinned


def test_load_refuses_a_missing_or_broken_policy(tmp_path: Path) -> None:
    with pytest.raises(GatewayError, match="cannot read policy"):
        load_policy(tmp_path / "absent.json", Sha256.of(b""))
    path = tmp_path / "bad.json"
    path.write_text('{"rules": [], "default": [{"type": "text", "text": "x"}], "extra": 1}')
    with pytest.raises(GatewayError, match="breaks its contract: extra"):
        load_policy(path, Sha256.of(path.read_bytes()))


def test_offers_holds_for_defined_and_announced_deferred_tools_only() -> None:
    searched = {
        "rules": [
            {
                "name": "search",
                "when": {"offers": ["mcp__kg__search_nodes"]},
                "reply": [{"type": "tool_use", "name": "mcp__kg__search_nodes", "input": {"query": "x"}}],
            }
        ],
        "default": [{"type": "text", "text": "d"}],
    }
    chosen = Policy.model_validate_json(json.dumps(searched))
    announced = (
        "<system-reminder>\nThe following deferred tools are now available via ToolSearch. Use ToolSearch first:\n"
        "WebFetch\nmcp__kg__open_nodes\nmcp__kg__search_nodes\n</system-reminder>"
    )
    assert MESSAGES.answer(chosen, request_body(announced))[0] == "search"
    defined = request_body("plain", tools=[{"name": "mcp__kg__search_nodes", "input_schema": {}}])
    assert MESSAGES.answer(chosen, defined)[0] == "search"
    assert (
        MESSAGES.answer(chosen, request_body("please call mcp__kg__search_nodes"))[0] == "default"
    )  # named, not offered
    other = announced.replace("mcp__kg__search_nodes", "mcp__kg__read_graph")
    assert MESSAGES.answer(chosen, request_body(other))[0] == "default"
