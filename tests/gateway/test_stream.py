"""Server-sent events: decoding, reassembly (thinking, signatures, tool input) and recorded streams through the log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loopback import KEY, AnthropicDouble, ForwardFactory, post, request_body

from bench.gateway import ChargeBasis, TokenUsage, read_exchanges
from bench.gateway.dialects.anthropic import assemble_message, message_events, request_view
from bench.gateway.neutral import Part
from bench.gateway.stream import SseDecoder, encode_sse

DATA = Path(__file__).parent / "data"
SIGNATURE = "EqQBCkgIBRABGAIiQM2fT0xk3mZ8wqRk1bVvJ6pN9hYc4sLrD2uXtA7eGf5KjWq8Hn3Zy0Pm1Cv6Bt9Lx2Rs4Oi7Ue5Ya8Db3Fw=="
# What a client reassembles from each recording, written out by hand from the recordings' events.
EXPECTED: dict[str, dict[str, Any]] = {
    "thinking_text_tool.sse": {
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 2210, "output_tokens": 131, "cache_read_input_tokens": 1840},
        "content": [
            {
                "type": "thinking",
                "thinking": "The user wants the ledger read before anything changes, so I open it first.",
                "signature": SIGNATURE,
            },
            {"type": "text", "text": "I'll read the ledger first."},
            {"type": "tool_use", "id": "toolu_01A9xRkLm2Qp7Wv3Ns5Tb8Yc", "name": "Read",
             "input": {"file_path": "/w/ledger.py", "limit": 200}},
        ],
    },
    "redacted_thinking_tool.sse": {
        "stop_reason": "tool_use",
        # as the SDKs apply it, the recorded message_delta's input_tokens 0 replaces message_start's 512
        "usage": {"input_tokens": 0, "output_tokens": 88, "cache_creation_input_tokens": 96},
        "content": [
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"
             "kNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pLmN4OK2Cq7fsNOIG"},
            {"type": "tool_use", "id": "toolu_01Gq5Zs8Pk3Lm7Xw2Ty9Rb4N", "name": "Bash",
             "input": {"command": "grep -n 'café' ledger.py", "description": "Find the café entries — all of them"}},
            {"type": "thinking", "thinking": "Interleaved: after the tool call, café noted.",
             "signature": "ErcBCkgIBRABGAIiQHh2Zs9Lk4Pq7Wm3Nx8Tb1Vc6Rd5Ye2Uf0Ig9Jh4Ko3Lp8Mq7Nr6Os5Pt4Qu3Rv2Sw1"
                          "Tx0Uy9Vz=="},
        ],
    },
}  # fmt: skip


def _recording(name: str) -> bytes:
    return (DATA / name).read_bytes()


def test_recordings_reassemble_with_thinking_signatures_and_tool_input_even_split_mid_character() -> None:
    for name, expected in EXPECTED.items():
        data = _recording(name)
        decoder = SseDecoder()
        events = [event for i in range(0, len(data), 7) for event in decoder.feed(data[i : i + 7])]
        message = assemble_message(events)
        assert message["content"] == expected["content"], name
        assert message["stop_reason"] == expected["stop_reason"]
        assert {k: message["usage"][k] for k in expected["usage"]} == expected["usage"]


def test_recorded_streams_round_trip_through_the_gateway_log_unchanged(
    double: AnthropicDouble, forward_gateway: ForwardFactory, tmp_path: Path
) -> None:
    double.replay = [_recording(name) for name in EXPECTED]
    with forward_gateway() as gateway:
        delivered = [post(gateway.url, "/v1/messages?beta=true", request_body("go")) for _ in EXPECTED]
    records = read_exchanges(tmp_path / "log")
    for name, answer, record in zip(EXPECTED, delivered, records, strict=True):
        recording = _recording(name)
        assert answer.status == 200 and answer.body == recording, name  # relayed byte for byte
        assert record.response_events is not None
        assert record.response_events == tuple(SseDecoder().feed(recording))  # every event kept, as delivered
        assert record.response_body == assemble_message(record.response_events)
        assert record.response_body["content"] == EXPECTED[name]["content"]  # type: ignore[index,call-overload]
    # metered from the largest count each report gives: the recorded message_delta's input_tokens 0 lowers nothing
    assert records[1].usage == TokenUsage(input_tokens=512, output_tokens=88, cache_creation_input_tokens=96)
    assert all(r.charge is ChargeBasis.USAGE and r.cost_usd > 0 for r in records)
    assert KEY not in (tmp_path / "log" / "exchanges.jsonl").read_text()


def test_out_of_shape_events_are_kept_and_change_nothing() -> None:
    sent = [
        ("message_start", '{"type":"message_start","message":{"id":"m","content":[]}}'),
        ("content_block_delta", "not json at all"),
        ("content_block_delta", '{"type":"content_block_delta","index":9,"delta":{}}'),
        ("content_block_start", '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'),
        ("content_block_delta", '{"type":"content_block_delta","index":0,"delta":{"type":"future_delta","x":1}}'),
    ]
    data = b": a comment line\n\n" + b"".join(f"event: {name}\ndata: {text}\n\n".encode() for name, text in sent)
    events = SseDecoder().feed(data)
    assert [e.event for e in events] == [name for name, _ in sent]
    assert events[1].data == "not json at all"
    assert assemble_message(events) == {"id": "m", "content": [{"type": "text", "text": ""}]}


def test_the_policy_stream_reassembles_to_its_message() -> None:
    message = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [
            {"type": "text", "text": "x" * 130},
            {"type": "tool_use", "id": "toolu_1", "name": "Edit",
             "input": {"file_path": "/w/a.py", "old_string": "é" * 60}},
        ],
        "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 7},
    }  # fmt: skip
    data = b"".join(encode_sse(event, payload) for event, payload in message_events(message))
    events = SseDecoder().feed(data)
    assert sum(1 for e in events if e.event == "content_block_delta") > 2  # texts really are chunked
    assert assemble_message(events) == message
    assert json.loads(json.dumps(assemble_message(events))) == message


def test_request_view_separates_parts_and_never_reads_assistant_turns() -> None:
    body = {
        "system": "sys text",
        "messages": [
            {"role": "user", "content": "first prompt"},
            {"role": "assistant", "content": [{"type": "text", "text": "agent words"}]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "file body"}]},
                    {"type": "text", "text": "hook context"},
                ],
            },
        ],
    }
    view = request_view(body)
    assert view.texts(Part.SYSTEM) == ("sys text",)
    assert view.texts(Part.USER) == ("first prompt", "hook context")
    assert view.texts(Part.TOOL_RESULTS) == ("file body",)
    assert view.texts(Part.LATEST) == ("file body", "hook context")
    assert "agent words" not in view.texts(Part.ANY)
    assert view.assistant_turns == 1 and view.has_tool_result
