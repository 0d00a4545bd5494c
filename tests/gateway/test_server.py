"""The gateway as an HTTP server (policy mode): the documented stream, the provider's answers, the record."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from loopback import KEY, OTHER_KEY, post, request_body, send

from bench.gateway import ChargeBasis, Gateway, Refusal, read_exchanges
from bench.gateway.body import MAX_BODY_BYTES
from bench.gateway.dialects.anthropic import assemble_message
from bench.gateway.stream import SseDecoder

EXPECTED_TEXT_STREAM = ["message_start", "content_block_start", "content_block_delta", "content_block_delta"]
VERSION = {"anthropic-version": "2023-06-01"}


def test_streams_the_documented_event_sequence(policy_gateway: Gateway) -> None:
    answer = post(policy_gateway.url, "/v1/messages?beta=true", request_body("hi"))
    assert answer.status == 200 and answer.headers["content-type"] == "text/event-stream"
    events = SseDecoder().feed(answer.body)
    names = [event.event for event in events]
    assert names[:4] == EXPECTED_TEXT_STREAM
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert all(isinstance(e.data, dict) and e.data["type"] == e.event for e in events)
    message = assemble_message(events)
    assert message["stop_reason"] == "end_turn" and message["content"][0]["text"].startswith("a plain answer")
    assert events[-2].data["usage"]["output_tokens"] > 0  # type: ignore[call-overload,index]


def test_tool_use_is_streamed_as_input_json_deltas(policy_gateway: Gateway) -> None:
    answer = post(policy_gateway.url, "/v1/messages?beta=true", request_body("remember the ledger"))
    events = SseDecoder().feed(answer.body)
    block = events[1].data["content_block"]  # type: ignore[call-overload,index]
    assert block == {"type": "tool_use", "id": block["id"], "name": "Read", "input": {}}
    deltas = {e.data["delta"]["type"] for e in events if e.event == "content_block_delta"}  # type: ignore[call-overload,index]
    assert deltas == {"input_json_delta"}
    message = assemble_message(events)
    assert message["stop_reason"] == "tool_use" and message["content"][0]["input"] == {"file_path": "/w/ledger.py"}


def test_non_streaming_and_count_tokens(policy_gateway: Gateway) -> None:
    answer = post(policy_gateway.url, "/v1/messages", request_body("hi", stream=False))
    assert answer.status == 200 and answer.headers["content-type"] == "application/json"
    assert answer.json["content"][0]["type"] == "text"
    answer = post(policy_gateway.url, "/v1/messages/count_tokens", {"model": "m", "messages": []})
    assert answer.status == 200 and answer.json["input_tokens"] > 0


def test_answers_as_the_provider_does_and_names_nothing(policy_gateway: Gateway, tmp_path: Path) -> None:
    """No Server header, the key required on every path, unknown paths the API's 404, the version required."""
    probe = send(policy_gateway.url, "/", None, {}, method="HEAD")
    assert probe.status == 401 and "server" not in probe.headers
    root = send(policy_gateway.url, "/", None, {})
    assert root.status == 401 and root.json["error"] == {
        "type": "authentication_error",
        "message": "x-api-key header is required",
    }
    assert post(policy_gateway.url, "/v1/messages", request_body("hi"), key="sk-unknown").json["error"] == {
        "type": "authentication_error",
        "message": "invalid x-api-key",
    }
    keyed = send(policy_gateway.url, "/", None, {"x-api-key": KEY})
    not_found = {"type": "error", "error": {"type": "not_found_error", "message": "Not Found"}}
    assert keyed.status == 404 and keyed.json == not_found
    assert post(policy_gateway.url, "/v1/complete", {}).status == 404
    unversioned = send(policy_gateway.url, "/v1/messages", json.dumps(request_body("hi")).encode(), {"x-api-key": KEY})
    assert unversioned.status == 400 and "anthropic-version" in unversioned.json["error"]["message"]
    every = b" ".join(
        v.encode() for a in (probe, root, keyed, unversioned) for v in [*a.headers.values(), a.body.decode()]
    )
    assert b"Python" not in every and b"BaseHTTP" not in every and b"not served here" not in every
    policy_gateway.stop()
    refusals = [record.refusal for record in read_exchanges(tmp_path / "log")]
    assert refusals == [Refusal.NO_KEY] * 3 + [Refusal.NOT_FOUND] * 2 + [Refusal.NO_API_VERSION]


def _raw(url: str, request: bytes) -> bytes:
    """Send raw bytes and read until the gateway closes the connection (it does after every refusal here)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(request)
        return b"".join(iter(lambda: connection.recv(65536), b""))


def test_a_request_the_parser_refuses_gets_the_api_error_shape(policy_gateway: Gateway) -> None:
    reply = _raw(policy_gateway.url, b"BREW /v1/messages HTTP/1.1\r\nHost: x\r\n\r\n")
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 501") and b"Server:" not in head
    assert json.loads(body) == {"type": "error", "error": {"type": "api_error", "message": "Not Implemented"}}


def test_a_chunked_body_is_read_whole_and_recorded(policy_gateway: Gateway, tmp_path: Path) -> None:
    body = request_body("remember the ledger " + "x" * 5000)
    assert post(policy_gateway.url, "/v1/messages", body, chunked=True).status == 200
    policy_gateway.stop()
    record = read_exchanges(tmp_path / "log")[0]
    assert record.request_body == body and record.rule == "recall-seen"
    assert "transfer-encoding" in record.request_headers and "content-length" not in record.request_headers


def test_bodies_that_cannot_be_read_whole_are_refused_and_recorded(policy_gateway: Gateway, tmp_path: Path) -> None:
    head = f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: {KEY}\r\nanthropic-version: 2023-06-01\r\n"
    broken = _raw(policy_gateway.url, (head + "transfer-encoding: chunked\r\n\r\nzz\r\n").encode())
    huge = _raw(policy_gateway.url, (head + f"content-length: {MAX_BODY_BYTES + 1}\r\n\r\n").encode())
    assert broken.startswith(b"HTTP/1.1 400") and b"chunk size" in broken
    assert huge.startswith(b"HTTP/1.1 413") and b"request_too_large" in huge
    policy_gateway.stop()
    records = read_exchanges(tmp_path / "log")
    assert [(r.status, r.refusal, r.request_body) for r in records] == [
        (400, Refusal.BAD_BODY, None),
        (413, Refusal.TOO_LARGE, None),
    ]


def test_every_exchange_is_recorded_in_order_without_credentials(policy_gateway: Gateway, tmp_path: Path) -> None:
    post(policy_gateway.url, "/v1/messages?beta=true", request_body("remember the ledger"))
    post(policy_gateway.url, "/v1/messages", request_body("hi", stream=False), key=OTHER_KEY)
    post(policy_gateway.url, "/v1/messages", request_body("hi"), key="sk-unknown")
    policy_gateway.stop()
    records = read_exchanges(tmp_path / "log")
    assert [(r.sequence, r.arm, r.status, r.rule, r.refusal) for r in records] == [
        (0, "one", 200, "recall-seen", None),
        (1, "two", 200, "default", None),
        (2, None, 401, None, Refusal.NO_KEY),
    ]
    assert records[0].streamed and records[0].response_body["content"][0]["name"] == "Read"  # type: ignore[index]
    assert records[0].response_events is not None and assemble_message(records[0].response_events) == (
        records[0].response_body
    )
    assert records[0].request_body == request_body("remember the ledger")
    assert records[1].response_events is None and records[1].chain is not None
    log = (tmp_path / "log" / "exchanges.jsonl").read_text()
    assert KEY not in log and OTHER_KEY not in log and "sk-unknown" not in log
    assert all(r.cost_usd == 0 and r.charge is ChargeBasis.NOT_BILLED for r in records)
    assert records[0].usage is not None and records[0].usage.input_tokens > 0


def test_a_body_nested_past_the_stack_is_answered_and_recorded(policy_gateway: Gateway, tmp_path: Path) -> None:
    """An agent can send the gateway anything; 100,000 nested arrays must not kill the request unrecorded."""
    body = b"[" * 100_000 + b"]" * 100_000
    headers = {"content-type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": KEY}
    answer = send(policy_gateway.url, "/v1/messages", body, headers)
    assert 400 <= answer.status < 500
    policy_gateway.stop()
    records = read_exchanges(tmp_path / "log")
    assert len(records) == 1 and records[0].status == answer.status
