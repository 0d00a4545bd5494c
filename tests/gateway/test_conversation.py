"""Chain digests, checked on the real CLI's own exchanges (captured by tests/grading/capture.py)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from bench.gateway import ExchangeRecord, MessageChain, message_digest

CAPTURED = Path(__file__).parents[1] / "grading" / "data" / "with-hooks.exchanges.jsonl"


def _requests() -> list[ExchangeRecord]:
    records = [ExchangeRecord.model_validate_json(line) for line in CAPTURED.read_bytes().splitlines()]
    return [r for r in records if r.method == "POST" and r.path.startswith("/v1/messages")]


def test_each_request_of_the_cli_conversation_extends_the_previous_one() -> None:
    requests = _requests()
    chains = [MessageChain.of(r.request_body, r.response_body) for r in requests]  # type: ignore[arg-type]
    first_prompt = [c for c in chains if c is not None]
    assert len(first_prompt) == len(requests) >= 3
    for before, after in itertools.pairwise(first_prompt[:3]):  # the first prompt; a resume rewrites turns
        assert before.reply is not None
        assert after.messages[: len(before.messages) + 1] == (*before.messages, before.reply)


def test_cache_control_markers_do_not_change_a_digest_but_content_does() -> None:
    message = {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}
    moved = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    assert message_digest(message) == message_digest(moved)
    assert message_digest(moved) != message_digest({"role": "user", "content": [{"type": "text", "text": "hi!"}]})
    assert MessageChain.of({"messages": "not a list"}, None) is None
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    chain = MessageChain.of({"messages": [moved]}, error)
    assert chain is not None and chain.reply is None and chain.messages == (message_digest(message),)
    assert json.loads(chain.model_dump_json())["messages"] == [message_digest(moved)]
