"""Policies as a documented contract: `schema model-policy`, and `policy check` naming the rule that fires at each
turn, why each rule before it did not, and refusing a tool call whose arguments break the tool's input_schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from bench.gateway.policy import Policy
from bench.gateway.policy_check import check_request
from bench.gateway.tool_schema import argument_errors, unread_keywords

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "challenges" / "example"
# The shape of the CLI's Read tool as its requests define it.
READ = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "The absolute path"},
        "offset": {"type": "integer", "minimum": 0},
        "limit": {"type": "integer", "exclusiveMinimum": 0},
    },
    "required": ["file_path"],
    "additionalProperties": False,
    "$schema": "http://json-schema.org/draft-07/schema#",
}
SEARCH = {
    "type": "object",
    "properties": {"query": {"type": "string"}, "tags": {"type": "array", "items": {"enum": ["a", "b"]}}},
}
POLICY = Policy.model_validate_json(
    json.dumps(
        {
            "rules": [
                {
                    "name": "search",
                    "when": {"offers": ["mcp__m__search"], "turn": 1},
                    "reply": [{"type": "tool_use", "name": "mcp__m__search", "input": {"query": ["ledger"]}}],
                },
                {
                    "name": "after-result",
                    "when": {"tool_result_seen": True, "contains": ["ledger"]},
                    "reply": [{"type": "tool_use", "name": "Read", "input": {"path": "/workspace/a.py"}}],
                },
                {
                    "name": "open",
                    "when": {"turn": 1, "lacks": ["nothing"]},
                    "reply": [
                        {"type": "tool_use", "name": "Read", "input": {"file_path": "/workspace/a.py", "offset": 2}}
                    ],
                },
            ],
            "default": [{"type": "text", "text": "Done."}],
        }
    )
)


def _body(messages: list[dict[str, Any]], tools: dict[str, Any]) -> dict[str, Any]:
    return {"messages": messages, "tools": [{"name": n, "input_schema": s} for n, s in tools.items()]}


FIRST = [{"role": "user", "content": [{"type": "text", "text": "Review the ledger."}]}]
SECOND = [
    *FIRST,
    {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "the ledger file"}]},
]


def test_each_turn_names_the_rule_that_fires_and_why_each_rule_before_it_did_not() -> None:
    first = check_request(POLICY, _body(FIRST, {"Read": READ}))
    assert (first.turn, first.fired) == (1, "open")
    assert [(m.rule, m.reasons) for m in first.missed] == [
        ("search", ("offers mcp__m__search: not offered",)),
        ("after-result", ("tool_result_seen true: it is not",)),
    ]
    assert [(c.tool, c.checked, c.errors, c.unchecked) for c in first.calls] == [
        ("Read", True, (), ("exclusiveMinimum", "minimum"))
    ]
    second = check_request(POLICY, _body(SECOND, {"Read": READ}), request=1, recorded="after-result")
    assert (second.turn, second.fired, second.refused) == (2, "after-result", True)
    assert second.missed[0].reasons == ("offers mcp__m__search: not offered", "turn 1: the request is turn 2")
    assert second.calls[0].errors == (
        "input: missing required 'file_path'",
        "input: 'path' is not a property of the tool",
    )


def test_a_call_to_an_offered_mcp_tool_is_checked_against_its_own_schema() -> None:
    checked = check_request(POLICY, _body(FIRST, {"Read": READ, "mcp__m__search": SEARCH}))
    assert checked.fired == "search" and checked.refused
    assert checked.calls[0].errors == ("input.query: expected string, got list ['ledger']",)
    deferred = check_request(POLICY, _body(FIRST, {}))  # no schema in the request: said, never passed silently
    assert deferred.fired == "open" and not deferred.calls[0].checked and not deferred.refused


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (READ, {"file_path": "/a"}),
        (READ, {"file_path": 3}),
        (READ, {}),
        (READ, {"file_path": "/a", "extra": 1}),
        (READ, {"file_path": "/a", "offset": 2.0}),
        (READ, {"file_path": "/a", "offset": True}),
        (READ, {"file_path": "/a", "offset": 1.5}),
        (SEARCH, {"query": "q", "tags": ["a", "b"]}),
        (SEARCH, {"query": "q", "tags": ["c"]}),
        (SEARCH, {"query": None}),
        ({"type": ["string", "null"]}, None),
        ({"type": "number"}, False),
        ({"enum": [1, "x"]}, "x"),
    ],
)
def test_the_argument_check_agrees_with_jsonschema(schema: dict[str, Any], value: Any) -> None:
    checked = {k: v for k, v in schema.items() if k not in unread_keywords(schema) and k != "$schema"}
    valid = jsonschema.Draft7Validator(checked).is_valid(value)
    assert (argument_errors(schema, value) == []) == valid


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bench", "--json", *argv], capture_output=True, text=True, cwd=REPO)


def test_policy_check_replays_the_policy_on_a_dry_request_of_the_challenges_prompt() -> None:
    done = _cli("policy", "check", str(EXAMPLE), "harbor-holds")
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    (turn,) = json.loads(line)["turns"]
    assert turn["fired"] == "read-importer" and turn["turn"] == 1
    assert {m["rule"]: m["reasons"] for m in turn["missed"]}["search-notes-and-read-importer"] == [
        "offers mcp__memory__search_nodes: not offered"
    ]
    refused = _cli("policy", "check", str(EXAMPLE), "no-such-challenge")
    assert (
        refused.returncode == 6 and "no challenge 'no-such-challenge'" in json.loads(refused.stdout)["error"]["message"]
    )


def test_the_model_policy_schema_is_public_and_every_example_policy_validates_against_it() -> None:
    done = _cli("schema", "model-policy")
    assert done.returncode == 0, done.stderr
    schema = json.loads(done.stdout)
    when = schema["$defs"]["When"]["properties"]
    assert {"turn", "contains", "lacks", "part", "offers", "tool_result_seen"} <= set(when)
    assert all(field.get("description") for field in when.values())
    for policy in sorted(EXAMPLE.glob("*/policy.json")):
        jsonschema.Draft202012Validator(schema).validate(json.loads(policy.read_text()))
