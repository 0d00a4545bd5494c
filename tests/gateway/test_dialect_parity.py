"""One policy, two dialects: the same conversation, sent as Anthropic Messages and as OpenAI Responses requests to
two policy gateways on real sockets, fires the same rules; the same usage costs the same in both."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from loopback import KEY, PRICE, arm, post, send, write_policy
from responses_double import CODEX_TOOLS, codex_headers

from bench.contracts.api_dialect import ApiDialect
from bench.gateway import DirectoryRecorder, Gateway, GatewayConfig, Mode, RequestView, TokenUsage, read_exchanges
from bench.gateway.dialects import dialect_of
from bench.gateway.dialects.openai_responses import responses_usage

SYSTEM = "You are a coding agent. Project notes: the ledger lives in ledger.py."
PARITY_POLICY: dict[str, Any] = {
    "rules": [
        {"name": "offers-search", "when": {"offers": ["mcp__kg__search_nodes"], "turn": 1},
         "reply": [{"type": "tool_use", "name": "mcp__kg__search_nodes", "input": {"query": "ledger"}}]},
        {"name": "user-said", "when": {"contains": ["skip notes"], "part": "user"},
         "reply": [{"type": "text", "text": "skipped"}]},
        {"name": "system-notes", "when": {"contains": ["Project notes"], "part": "system", "turn": 1,
                                          "tool_result_seen": False},
         "reply": [{"type": "tool_use", "name": "Read", "input": {"file_path": "/w/ledger.py"}}]},
        {"name": "read-result", "when": {"contains": ["def ledger"], "part": "tool-results"},
         "reply": [{"type": "text", "text": "I have read it."}]},
        {"name": "latest-asks", "when": {"contains": ["and now"], "part": "latest", "turn": 3, "lacks": ["skip"]},
         "reply": [{"type": "text", "text": "third turn"}]},
    ],
    "default": [{"type": "text", "text": "default"}],
}  # fmt: skip

# A conversation in neutral steps: ("user", text), ("call", id, name, arguments), ("result", id, text), ("say", text).
Step = tuple[Any, ...]
CONVERSATIONS: dict[str, list[Step]] = {
    "first-turn": [("user", "fix the ledger")],
    "user-opts-out": [("user", "fix the ledger, skip notes")],
    "after-a-read": [
        ("user", "fix the ledger"),
        ("call", "c1", "Read", {"file_path": "/w/ledger.py"}),
        ("result", "c1", "def ledger(): ..."),
    ],
    "third-turn": [
        ("user", "fix the ledger"),
        ("call", "c1", "Bash", {"command": "ls"}),
        ("result", "c1", "a.py"),
        ("say", "listed"),
        ("user", "and now the tests"),
    ],
    "a-result-then-more": [
        ("user", "fix the ledger"),
        ("call", "c1", "Bash", {"command": "cat ledger.py"}),
        ("result", "c1", "def ledger(): ..."),
        ("say", "seen"),
        ("user", "and now the tests"),
    ],
}


def as_messages(steps: list[Step], tools: list[str]) -> dict[str, Any]:
    """The conversation as Claude Code sends it: tool calls in assistant messages, results in user messages."""
    messages: list[dict[str, Any]] = []

    def put(role: str, block: dict[str, Any]) -> None:
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].append(block)
        else:
            messages.append({"role": role, "content": [block]})

    for step in steps:
        if step[0] == "user":
            put("user", {"type": "text", "text": step[1]})
        elif step[0] == "say":
            put("assistant", {"type": "text", "text": step[1]})
        elif step[0] == "call":
            put("assistant", {"type": "tool_use", "id": step[1], "name": step[2], "input": step[3]})
        else:
            put("user", {"type": "tool_result", "tool_use_id": step[1], "content": [{"type": "text", "text": step[2]}]})
    defined = [{"name": name, "input_schema": {"type": "object"}} for name in tools]
    return {"model": "m", "max_tokens": 512, "stream": True, "system": SYSTEM, "messages": messages, "tools": defined}


def as_responses(steps: list[Step], tools: list[str]) -> dict[str, Any]:
    """The conversation as Codex sends it: items, MCP tools as namespaced functions."""
    items: list[dict[str, Any]] = [{"type": "message", "role": "developer", "content": SYSTEM}]
    for step in steps:
        if step[0] == "user":
            items.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": step[1]}]})
        elif step[0] == "say":
            items.append(
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": step[1]}]}
            )
        elif step[0] == "call":
            items.append(
                {"type": "function_call", "call_id": step[1], "name": step[2], "arguments": json.dumps(step[3])}
            )
        else:
            items.append({"type": "function_call_output", "call_id": step[1], "output": step[2]})
    defined: list[dict[str, Any]] = list(CODEX_TOOLS)
    for name in tools:
        space, _, tool = name.rpartition("__")
        defined.append({"type": "namespace", "name": space, "tools": [{"type": "function", "name": tool}]})
    return {"model": "m", "input": items, "tools": defined, "stream": True, "store": False}


@pytest.fixture
def gateways(tmp_path: Path) -> Iterator[dict[ApiDialect, Gateway]]:
    served = {}
    for dialect in ApiDialect:
        root = tmp_path / dialect.value
        root.mkdir()
        config = GatewayConfig(
            mode=Mode.POLICY, dialect=dialect, arms=(arm("one", KEY),), policy=write_policy(root, PARITY_POLICY)
        )
        served[dialect] = Gateway(config, DirectoryRecorder(root / "log"), policy_root=root).__enter__()
    try:
        yield served
    finally:
        for gateway in served.values():
            gateway.stop()


def _send(gateways: dict[ApiDialect, Gateway], steps: list[Step], tools: list[str]) -> None:
    anthropic = post(gateways[ApiDialect.ANTHROPIC_MESSAGES].url, "/v1/messages", as_messages(steps, tools))
    body = json.dumps(as_responses(steps, tools)).encode()
    responses = send(gateways[ApiDialect.OPENAI_RESPONSES].url, "/v1/responses", body, codex_headers(KEY))
    assert anthropic.status == responses.status == 200


def test_the_same_conversation_fires_the_same_rule_in_both_dialects(
    gateways: dict[ApiDialect, Gateway], tmp_path: Path
) -> None:
    for steps in CONVERSATIONS.values():
        _send(gateways, steps, [])
    _send(gateways, CONVERSATIONS["first-turn"], ["mcp__kg__search_nodes"])
    for gateway in gateways.values():
        gateway.stop()
    fired = {d: [r.rule for r in read_exchanges(tmp_path / d.value / "log")] for d in ApiDialect}
    expected = ["system-notes", "user-said", "read-result", "latest-asks", "read-result", "offers-search"]
    assert fired[ApiDialect.ANTHROPIC_MESSAGES] == fired[ApiDialect.OPENAI_RESPONSES] == expected


@pytest.mark.parametrize("name", sorted(CONVERSATIONS))
def test_both_dialects_read_a_conversation_into_the_same_view(name: str) -> None:
    steps = CONVERSATIONS[name]
    messages = dialect_of(ApiDialect.ANTHROPIC_MESSAGES).parse(as_messages(steps, ["mcp__kg__search_nodes"]))
    responses = dialect_of(ApiDialect.OPENAI_RESPONSES).parse(as_responses(steps, ["mcp__kg__search_nodes"]))
    assert RequestView.of(messages) == RequestView.of(responses)
    assert [m.role for m in messages.messages] == [m.role for m in responses.messages]
    assert "mcp__kg__search_nodes" in messages.tools & responses.tools


def test_the_same_usage_costs_the_same_in_both_dialects() -> None:
    """Responses counts cached tokens inside input_tokens; the neutral usage counts them as cache reads."""
    anthropic = {"input_tokens": 900, "cache_read_input_tokens": 100, "output_tokens": 40}
    openai = {
        "input_tokens": 1000,
        "input_tokens_details": {"cached_tokens": 100},
        "output_tokens": 40,
        "output_tokens_details": {"reasoning_tokens": 12},
        "total_tokens": 1040,
    }
    neutral = responses_usage(openai)
    assert (
        neutral
        == TokenUsage.of(anthropic)
        == dialect_of(ApiDialect.ANTHROPIC_MESSAGES).answer_usage({"usage": anthropic})
    )
    assert neutral is not None and PRICE.cost(neutral) == Decimal(900 * 3 + 100 * Decimal("0.3") + 40 * 15) / 10**6


@pytest.mark.parametrize(
    "usage",
    [
        {"input_tokens": 10, "output_tokens": 5, "total_tokens": 16},  # total is not the sum
        {"input_tokens": 10, "output_tokens": 5, "input_tokens_details": {"cached_tokens": 11}},  # more cached than in
        {"input_tokens": 10, "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 6}},
        {"input_tokens": "10", "output_tokens": 5},
        {"input_tokens": 10, "output_tokens": True},
        {"input_tokens": -1, "output_tokens": 5},
        {"output_tokens": 5},
        "10 tokens",
    ],
)
def test_a_malformed_responses_usage_is_no_usage(usage: Any) -> None:
    assert responses_usage(usage) is None


def test_every_contract_dialect_has_a_gateway_dialect() -> None:
    assert {dialect_of(name).name for name in ApiDialect} == set(ApiDialect)


def test_header_names_are_read_in_any_case(gateways: dict[ApiDialect, Gateway]) -> None:
    """HTTP header names are case-insensitive: a dialect reads them lower-cased, as the API does."""
    body = json.dumps(as_messages(CONVERSATIONS["first-turn"], [])).encode()
    headers = {"Content-Type": "application/json", "Anthropic-Version": "2023-06-01", "X-Api-Key": KEY}
    assert send(gateways[ApiDialect.ANTHROPIC_MESSAGES].url, "/v1/messages", body, headers).status == 200
