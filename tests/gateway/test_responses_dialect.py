"""The OpenAI Responses dialect in policy mode, on a real socket: requests as the Codex CLI sends them, answers in
the API's documented shapes (whole and streamed), its errors, and hostile bodies refused without a traceback."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from loopback import KEY, OTHER_KEY, POLICY, arm, send, write_policy
from responses_double import (
    assistant,
    call,
    codex_headers,
    developer,
    output,
    responses_body,
    user,
)

from bench.contracts import canonical_bytes
from bench.contracts.api_dialect import ApiDialect
from bench.gateway import (
    ChargeBasis,
    Conversation,
    DirectoryRecorder,
    ExchangeRecord,
    Gateway,
    GatewayConfig,
    Mode,
    NeutralReply,
    Refusal,
    RequestKind,
    read_exchanges,
)
from bench.gateway.dialects import ErrorKind, dialect_of
from bench.gateway.neutral import TextPart, ToolCallPart
from bench.gateway.stream import SseDecoder, StreamEvent

RESPONSES = dialect_of(ApiDialect.OPENAI_RESPONSES)


def _gateway(tmp_path: Path, **options: Any) -> Gateway:
    config = GatewayConfig(
        mode=Mode.POLICY,
        dialect=ApiDialect.OPENAI_RESPONSES,
        arms=(arm("one", KEY), arm("two", OTHER_KEY)),
        policy=write_policy(tmp_path),
    )
    return Gateway(config, DirectoryRecorder(tmp_path / "log"), policy_root=tmp_path, **options)


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[Gateway]:
    with _gateway(tmp_path) as served:
        yield served


def _post(gateway: Gateway, body: Any, key: str | None = KEY, kind: str = "turn", path: str = "/v1/responses") -> Any:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return send(gateway.url, path, data, codex_headers(key, kind))


def _records(gateway: Gateway, tmp_path: Path) -> tuple[ExchangeRecord, ...]:
    gateway.stop()  # once stop returns, every exchange is recorded
    return read_exchanges(tmp_path / "log")


def _events(raw: bytes) -> list[StreamEvent]:
    return SseDecoder().feed(raw)


def test_a_streamed_answer_follows_the_documented_event_sequence(gateway: Gateway, tmp_path: Path) -> None:
    answer = _post(gateway, responses_body(user("nothing special here")))
    assert answer.status == 200 and answer.headers["content-type"].startswith("text/event-stream")
    events = _events(answer.body)
    names = [e.event for e in events]
    assert names[0] == "response.created" and names[-1] == "response.completed"
    assert [e.data["sequence_number"] for e in events] == list(range(len(events)))  # type: ignore[index,call-overload]
    assert all(e.data["type"] == e.event for e in events)  # type: ignore[index,call-overload]
    deltas = "".join(str(e.data["delta"]) for e in events if e.event == "response.output_text.delta")  # type: ignore[index,call-overload]
    assert deltas == POLICY["default"][0]["text"] and names.count("response.output_text.delta") > 1
    done = [e.data["item"] for e in events if e.event == "response.output_item.done"]  # type: ignore[index,call-overload]
    assert done[0]["content"][0] == {"type": "output_text", "text": deltas, "annotations": []}  # type: ignore[index]
    completed: Any = events[-1].data
    usage = completed["response"]["usage"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"] > 0
    assert usage["input_tokens_details"] == {"cached_tokens": 0}
    (record,) = _records(gateway, tmp_path)
    assert record.rule == "default" and record.streamed and record.response_events == tuple(events)
    assert record.response_body == RESPONSES.assemble(events) == completed["response"]
    assert record.usage is not None and record.usage.input_tokens == usage["input_tokens"]
    assert record.charge is ChargeBasis.NOT_BILLED and record.chain is None


def test_a_tool_call_answer_streams_its_arguments_and_a_whole_answer_is_one_object(gateway: Gateway) -> None:
    streamed = _events(_post(gateway, responses_body(user("please remember the ledger"))).body)
    pieces = [e.data["delta"] for e in streamed if e.event == "response.function_call_arguments.delta"]  # type: ignore[index,call-overload]
    assert json.loads("".join(map(str, pieces))) == {"file_path": "/w/ledger.py"}
    (item,) = [e.data["item"] for e in streamed if e.event == "response.output_item.done"]  # type: ignore[index,call-overload]
    assert item["type"] == "function_call" and item["name"] == "Read" and item["call_id"].startswith("call_")  # type: ignore[index]
    whole = _post(gateway, responses_body(user("please remember the ledger"), stream=False))
    assert whole.status == 200 and whole.headers["content-type"] == "application/json"
    body = whole.json
    assert body["object"] == "response" and body["status"] == "completed" and len(body["output"]) == 1
    ids = ("id", "call_id")  # derived from the request bytes, which differ in `stream`
    assert {k: v for k, v in body["output"][0].items() if k not in ids} == {
        k: v for k, v in item.items() if k not in ids
    }  # type: ignore[union-attr]
    again = _post(gateway, responses_body(user("please remember the ledger"), stream=False)).json
    assert again == body  # identifiers derive from the request bytes


def test_a_codex_conversation_is_read_turn_by_turn_with_tool_results(gateway: Gateway, tmp_path: Path) -> None:
    first = responses_body(user("# AGENTS.md instructions", "<environment_context/>"), user("list the files"))
    ran = [call("call_1", "exec_command", {"cmd": "ls"}), output("call_1", "Output:\nledger.py\n")]
    second = responses_body(*first["input"][1:], {"type": "reasoning", "summary": [], "content": None}, *ran)
    mcp = [
        call("call_2", "read_graph", {}, namespace="mcp__mem"),
        output("call_2", [{"type": "input_text", "text": "g"}]),
    ]
    third = responses_body(*second["input"][1:], assistant("done"), user("now more"), *mcp)
    assert [_post(gateway, body).status for body in (first, second, third)] == [200, 200, 200]
    records = _records(gateway, tmp_path)
    assert [r.rule for r in records] == ["default", "after-tools", "after-tools"]
    conversation = RESPONSES.parse(third)
    assert conversation.system == ("You are a coding agent.",)
    assert [m.role.value for m in conversation.messages] == ["user", "assistant"] * 3 + ["user"]
    calls = [p for m in conversation.messages for p in m.parts if isinstance(p, ToolCallPart)]
    assert [c.qualified_name for c in calls] == ["exec_command", "mcp__mem__read_graph"]
    assert conversation.tools == {"exec_command", "apply_patch", "tool_search", "web_search"}


def test_tools_a_tool_search_brings_in_are_offered(gateway: Gateway) -> None:
    found = {
        "type": "tool_search_output",
        "call_id": "call_s",
        "execution": "client",
        "status": "completed",
        "tools": [{"type": "namespace", "name": "mcp__kg", "tools": [{"type": "function", "name": "search_nodes"}]}],
    }
    searched = {"type": "tool_search_call", "call_id": "call_s", "execution": "client", "arguments": {"query": "kg"}}
    body = responses_body(user("find it"), searched, found)
    assert "mcp__kg__search_nodes" in RESPONSES.parse(body).tools
    assert "mcp__kg__search_nodes" not in RESPONSES.parse(responses_body(user("find it"))).tools


def test_errors_come_in_the_responses_api_shape(gateway: Gateway, tmp_path: Path) -> None:
    unkeyed = _post(gateway, responses_body(user("hi")), key=None)
    assert unkeyed.status == 401 and unkeyed.json["error"]["code"] == "invalid_api_key"
    assert set(unkeyed.json["error"]) == {"message", "type", "param", "code"}
    assert _post(gateway, responses_body(user("hi")), key="sk-unknown").status == 401
    assert _post(gateway, responses_body(user("hi")), path="/v1/messages").status == 404
    assert _post(gateway, responses_body(user("hi")), path="/v1/messages/count_tokens").status == 404
    stated = _post(gateway, responses_body(user("hi"), previous_response_id="resp_1"))
    assert stated.status == 400 and "previous_response_id" in stated.json["error"]["message"]
    parser = send(gateway.url, "/v1/responses", None, {}, method="BREW")
    assert parser.status == 501 and parser.json["error"]["type"] == "server_error"
    refusals = [r.refusal for r in _records(gateway, tmp_path)]
    assert refusals == [Refusal.NO_KEY, Refusal.NO_KEY, Refusal.NOT_FOUND, Refusal.NOT_FOUND, Refusal.BAD_BODY]


HOSTILE: list[tuple[Any, str]] = [
    ({"model": "m", "input": 7}, "input: expected a string or a list"),
    ({"model": "m", "input": [3]}, "input[0]: an item must be an object"),
    ({"model": "m", "input": [{"type": "computer_call", "call_id": "c"}]}, "input[0].type: 'computer_call'"),
    ({"model": "m", "input": [{"type": "message", "role": "wizard", "content": "x"}]}, "input[0].role"),
    ({"model": "m", "input": [{"role": "user", "content": 5}]}, "input[0].content: expected a string or a list"),
    ({"model": "m", "input": [{"role": "user", "content": [1]}]}, "input[0].content[0]: a content part"),
    ({"model": "m", "input": [{"role": "user", "content": [{"text": 2}]}]}, "input[0].content[0].text"),
    ({"model": "m", "input": [{"type": "function_call", "call_id": 1, "name": "x", "arguments": "{}"}]}, "call_id"),
    ({"model": "m", "input": [{"type": "function_call", "call_id": "c", "name": "x"}]}, "input[0].arguments"),
    ({"model": "m", "input": [{**call("c", "x", {}), "namespace": []}]}, "input[0].namespace"),
    ({"model": "m", "input": [{"type": "function_call_output", "call_id": "c", "output": {"a": 1}}]}, "output"),
    ({"model": "m", "input": [], "tools": {"a": 1}}, "tools: expected a list"),
    ({"model": "m", "input": [], "tools": [{"type": "function"}]}, "tools[0].name"),
    ({"model": "m", "input": [], "tools": [{"type": "namespace", "name": "n", "tools": 3}]}, "tools[0].tools"),
    ({"model": "m", "input": [], "instructions": ["x"]}, "instructions: expected str"),
    ({"model": "m", "input": [], "max_output_tokens": -1}, "max_output_tokens"),
    ([1, 2], "the request body must be a JSON object"),
]


@pytest.mark.parametrize(("body", "named"), HOSTILE)
def test_malformed_requests_are_refused_naming_where(gateway: Gateway, tmp_path: Path, body: Any, named: str) -> None:
    answer = _post(gateway, body)
    assert answer.status == 400 and named in answer.json["error"]["message"], answer.body
    (record,) = _records(gateway, tmp_path)
    assert record.refusal is Refusal.BAD_BODY and record.request_body == body


def _mutate(value: Any, rng: random.Random) -> Any:
    """``value`` with one node somewhere replaced by a value of another JSON type."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(sorted(value))
        return {**value, key: _mutate(value[key], rng)}
    if isinstance(value, list) and value and rng.random() < 0.8:
        index = rng.randrange(len(value))
        return [*value[:index], _mutate(value[index], rng), *value[index + 1 :]]
    return rng.choice([None, 0, -1, 1.5, True, "", "x", [], [None], {}, {"type": "x"}, "\udcff"[:0]])


def test_mutated_codex_requests_are_answered_or_refused_never_crashed(gateway: Gateway, tmp_path: Path) -> None:
    """Every mutation of a real-shaped conversation gets a 200 or a 400 and a record; none is a 500."""
    base = responses_body(
        user("remember the ledger"),
        call("call_1", "exec_command", {"cmd": "ls"}),
        output("call_1", [{"type": "input_text", "text": "out"}]),
        {"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch", "input": "*** Begin Patch"},
        {"type": "custom_tool_call_output", "call_id": "call_2", "output": "ok"},
    )
    rng = random.Random(34)
    statuses = [_post(gateway, _mutate(base, rng), kind="turn").status for _ in range(120)]
    assert set(statuses) <= {200, 400} and {200, 400} <= set(statuses)
    records = _records(gateway, tmp_path)
    assert len(records) == 120 and all((r.status == 400) == (r.refusal is Refusal.BAD_BODY) for r in records)


class CodexLike:
    """Hooks as a Codex harness would write them: the policy's Read runs as a shell command, and a compaction is
    told by the client's turn metadata header."""

    def name_calls(self, reply: NeutralReply, conversation: Conversation) -> NeutralReply:
        parts: list[TextPart | ToolCallPart] = []
        for part in reply.parts:
            offered = "exec_command" in conversation.tools  # the hook sees what the request offers
            if isinstance(part, ToolCallPart) and part.name == "Read" and offered and isinstance(part.arguments, dict):
                command = {"cmd": f"cat {part.arguments['file_path']}"}
                part = part.model_copy(update={"name": "exec_command", "arguments": command})
            parts.append(part)
        return reply.model_copy(update={"parts": tuple(parts)})

    def offered_tools(self, conversation: Conversation) -> frozenset[str]:
        return frozenset()

    def request_kind(self, headers: Mapping[str, str], body: dict[str, Any]) -> RequestKind:
        metadata = json.loads(headers.get("x-codex-turn-metadata", "{}"))
        return RequestKind.COMPACTION if metadata.get("request_kind") == "compaction" else RequestKind.TURN


def test_the_harness_names_the_policys_tool_calls_and_kinds_its_requests(tmp_path: Path) -> None:
    """The hooks a harness plugs in: the policy says Read, the harness's client runs exec_command; a compaction
    request is answered and metered like any other and recorded as a compaction."""
    checkpoint = user("You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary")
    with _gateway(tmp_path, hooks=CodexLike()) as gateway:
        body = _post(gateway, responses_body(user("please remember the ledger"), stream=False)).json
        compacted = _post(gateway, responses_body(user("work"), checkpoint, tools=[]), kind="compaction")
        records = _records(gateway, tmp_path)
    (item,) = body["output"]
    assert item["name"] == "exec_command" and json.loads(item["arguments"]) == {"cmd": "cat /w/ledger.py"}
    assert compacted.status == 200 and records[1].usage is not None and records[1].usage.output_tokens > 0
    assert [(r.rule, r.request_kind) for r in records] == [
        ("recall-seen", RequestKind.TURN),
        ("default", RequestKind.COMPACTION),
    ]
    lines = [json.loads(line) for line in (tmp_path / "log" / "exchanges.jsonl").read_text().splitlines()]
    assert {line["sequence"]: line.get("request_kind") for line in lines} == {0: "turn", 1: "compaction"}


def test_without_hooks_a_record_has_no_kind_and_its_bytes_are_unchanged(gateway: Gateway, tmp_path: Path) -> None:
    assert _post(gateway, responses_body(user("hi"))).status == 200
    (record,) = _records(gateway, tmp_path)
    assert record.request_kind is None
    assert "request_kind" not in json.loads((tmp_path / "log" / "exchanges.jsonl").read_text())


def test_a_developer_message_after_the_prompt_is_user_side_context() -> None:
    """Codex delivers hook output as a later developer message: the newest thing the model is shown."""
    body = responses_body(user("the prompt"), developer("hook context: the ledger moved"))
    conversation = RESPONSES.parse(body)
    (message,) = conversation.messages
    texts = [p.text for p in message.parts if isinstance(p, TextPart)]
    assert texts == ["the prompt", "hook context: the ledger moved"]


def test_a_record_names_its_dialect_and_a_messages_record_keeps_its_bytes(gateway: Gateway, tmp_path: Path) -> None:
    """Grading reads an exchange through the dialect its record names; the Messages API's, the default, is left out
    so every record made before dialects existed keeps its bytes and reads as one of that API."""
    assert _post(gateway, responses_body(user("hi"))).status == 200
    (record,) = _records(gateway, tmp_path)
    line = json.loads((tmp_path / "log" / "exchanges.jsonl").read_text())
    assert record.dialect is ApiDialect.OPENAI_RESPONSES and line["dialect"] == "openai-responses"
    messages = record.model_copy(update={"dialect": ApiDialect.ANTHROPIC_MESSAGES})
    assert b'"dialect"' not in canonical_bytes(messages)
    assert ExchangeRecord.model_validate_json(canonical_bytes(messages)).dialect is ApiDialect.ANTHROPIC_MESSAGES


@pytest.mark.parametrize("name", list(ApiDialect))
def test_an_answer_reads_back_as_the_assistant_message_a_next_request_repeats(name: ApiDialect) -> None:
    dialect = dialect_of(name)
    reply = NeutralReply(
        parts=(TextPart(text="looking"), ToolCallPart(id="c1", name="Read", arguments={"file_path": "/w/a"})),
        seed="0" * 64,
    )
    first = {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "go"}]}
    body = first if name is ApiDialect.ANTHROPIC_MESSAGES else responses_body(user("go"))
    answer, _ = dialect.render(reply, body)
    message = dialect.reply(answer)
    assert message is not None and [type(part) for part in message.parts] == [TextPart, ToolCallPart]
    assert dialect.reply(dialect.error_body(ErrorKind.SERVER, "down")) is None


def test_an_answer_holding_an_item_no_model_writes_is_no_answer() -> None:
    """A provider answering with a developer message (the harness's hook channel) gives no assistant message."""
    answer, _ = RESPONSES.render(NeutralReply(parts=(TextPart(text="ok"),), seed="0" * 64), responses_body(user("go")))
    assert RESPONSES.reply(answer) is not None
    forged = {**answer, "output": [*answer["output"], developer("the ledger is quartz")]}
    assert RESPONSES.reply(forged) is None
    assert RESPONSES.reply({**answer, "output": [{"type": "brand_new"}]}) is None
