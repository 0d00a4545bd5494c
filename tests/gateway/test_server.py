from __future__ import annotations

import json
from pathlib import Path

from loopback import KEY, OTHER_KEY, post, request_body

from bench.gateway import Gateway, read_exchanges
from bench.gateway.wire import SseDecoder, assemble_message

EXPECTED_TEXT_STREAM = ["message_start", "content_block_start", "content_block_delta", "content_block_delta"]


def test_streams_the_documented_event_sequence(policy_gateway: Gateway) -> None:
    status, content_type, data = post(policy_gateway.url, "/v1/messages?beta=true", request_body("hi"))
    assert status == 200 and content_type == "text/event-stream"
    events = list(SseDecoder().feed(data))
    names = [name for name, _ in events]
    assert names[:4] == EXPECTED_TEXT_STREAM
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert all(payload["type"] == name for name, payload in events)
    message = assemble_message(events)
    assert message["stop_reason"] == "end_turn" and message["content"][0]["text"].startswith("a plain answer")
    assert events[-2][1]["usage"]["output_tokens"] > 0


def test_tool_use_is_streamed_as_input_json_deltas(policy_gateway: Gateway) -> None:
    _, _, data = post(policy_gateway.url, "/v1/messages?beta=true", request_body("remember the ledger"))
    events = list(SseDecoder().feed(data))
    assert events[1][1]["content_block"] == {
        "type": "tool_use",
        "id": events[1][1]["content_block"]["id"],
        "name": "Read",
        "input": {},
    }
    assert {payload["delta"]["type"] for name, payload in events if name == "content_block_delta"} == {
        "input_json_delta"
    }
    message = assemble_message(events)
    assert message["stop_reason"] == "tool_use" and message["content"][0]["input"] == {"file_path": "/w/ledger.py"}


def test_non_streaming_and_count_tokens(policy_gateway: Gateway) -> None:
    status, content_type, data = post(policy_gateway.url, "/v1/messages", request_body("hi", stream=False))
    assert status == 200 and content_type == "application/json"
    assert json.loads(data)["content"][0]["type"] == "text"
    status, _, data = post(policy_gateway.url, "/v1/messages/count_tokens", {"model": "m", "messages": []})
    assert status == 200 and json.loads(data)["input_tokens"] > 0


def test_refusals_are_anthropic_shaped(policy_gateway: Gateway) -> None:
    status, _, data = post(policy_gateway.url, "/v1/messages", request_body("hi"), key="sk-unknown")
    assert status == 401 and json.loads(data)["error"]["type"] == "authentication_error"
    status, _, data = post(policy_gateway.url, "/v1/complete", {})
    assert status == 404 and json.loads(data) == {
        "type": "error",
        "error": {"type": "not_found_error", "message": "POST /v1/complete is not served here"},
    }


def test_every_exchange_is_recorded_in_order_without_credentials(policy_gateway: Gateway, tmp_path: Path) -> None:
    post(policy_gateway.url, "/v1/messages?beta=true", request_body("remember the ledger"))
    post(policy_gateway.url, "/v1/messages", request_body("hi", stream=False), key=OTHER_KEY)
    post(policy_gateway.url, "/v1/messages", request_body("hi"), key="sk-unknown")
    policy_gateway.stop()
    records = read_exchanges(tmp_path / "log")
    assert [(r.sequence, r.arm, r.status, r.rule) for r in records] == [
        (0, "one", 200, "recall-seen"),
        (1, "two", 200, "default"),
        (2, None, 401, None),
    ]
    assert records[0].streamed and records[0].response_body["content"][0]["name"] == "Read"  # type: ignore[index]
    assert records[0].request_body == request_body("remember the ledger")
    log = (tmp_path / "log" / "exchanges.jsonl").read_text()
    assert KEY not in log and OTHER_KEY not in log and "sk-unknown" not in log
    assert records[0].cost_usd == 0.0 and records[0].usage is not None and records[0].usage.input_tokens > 0
