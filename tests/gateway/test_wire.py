from __future__ import annotations

from bench.gateway.wire import Part, RequestView, SseDecoder, assemble_message, encode_sse, message_events

MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "m",
    "content": [
        {"type": "text", "text": "x" * 130},
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "Edit",
            "input": {"file_path": "/w/a.py", "old_string": "é" * 60},
        },
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 7},
}


def test_stream_reassembles_to_the_message_even_when_split_mid_character() -> None:
    data = b"".join(encode_sse(event, payload) for event, payload in message_events(MESSAGE))
    decoder = SseDecoder()
    events = [event for i in range(0, len(data), 7) for event in decoder.feed(data[i : i + 7])]
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == 2 and names.count("content_block_stop") == 2
    assert names.count("content_block_delta") > 2  # texts really are chunked
    assert assemble_message(events) == MESSAGE


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
    view = RequestView.of(body)
    assert view.texts(Part.SYSTEM) == ("sys text",)
    assert view.texts(Part.USER) == ("first prompt", "hook context")
    assert view.texts(Part.TOOL_RESULTS) == ("file body",)
    assert view.texts(Part.LATEST) == ("file body", "hook context")
    assert "agent words" not in view.texts(Part.ANY)
    assert view.assistant_turns == 1 and view.has_tool_result
