"""The OpenAI Responses API, as the Codex CLI speaks it to a custom provider: ``POST {base_url}/responses``.

A request is stateless (``store: false``, the full history every time): ``input`` is a list of items, messages
(``developer``, ``user``, ``assistant``; content a string or a list of parts carrying ``text``), the model's own
items (``reasoning``, ``function_call{call_id, name, namespace?, arguments}``, ``custom_tool_call{call_id, name,
input}``, ``tool_search_call``) and the client's answers to them (``function_call_output{call_id, output}``,
``custom_tool_call_output``, ``tool_search_output{tools}``), where an ``output`` is a string or a list of
``input_text`` parts. ``tools`` defines ``function`` and ``custom`` tools by name, hosted tools (``web_search``,
``tool_search``) by type, and ``namespace`` groups; a ``tool_search_output`` brings deferred tools in.

An answer streams as ``response.created``, then per output item ``response.output_item.added``, its deltas
(``response.output_text.delta`` inside ``response.content_part.added``/``.done``,
``response.function_call_arguments.delta``, ``response.custom_tool_call_input.delta``) and
``response.output_item.done``, then ``response.completed`` with the response and its usage (``input_tokens``
including ``input_tokens_details.cached_tokens``, ``output_tokens`` including
``output_tokens_details.reasoning_tokens``, ``total_tokens``). ``response.incomplete`` also ends a billed answer;
``response.failed`` (``response.error{code, message}``) and ``error`` end a failed one. Every event carries its
``sequence_number``.

An item type this module does not know is refused (400, naming its index and type): a policy answering from a
conversation it read only in part would answer from what the harness did not send.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ...contracts.api_dialect import ApiDialect
from ..conversation import MessageChain
from ..metering import TokenUsage
from ..neutral import Conversation, Message, NeutralReply, ToolCallPart
from ..stream import StreamEvent
from .base import Dialect, ErrorKind, Rejection, estimate_tokens
from .responses_items import parse_input, parse_output, tool_names
from .responses_stream import assemble_response, response_events

__all__ = ["OpenAiResponses", "responses_usage"]

_ENDED = ("response.completed", "response.incomplete")  # a billed answer's last event
_FAILED = frozenset({"response.failed", "error"})


def responses_usage(usage: object) -> TokenUsage | None:
    """The neutral usage of a Responses ``usage`` object: cached input tokens are cache reads, the rest plain
    input; reasoning tokens are output. None when a count is missing, not a count, or inconsistent."""
    if not isinstance(usage, dict):
        return None
    given, output = usage.get("input_tokens"), usage.get("output_tokens")
    details = usage.get("input_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    cached = 0 if cached is None else cached
    out_details = usage.get("output_tokens_details")
    reasoning = out_details.get("reasoning_tokens") if isinstance(out_details, dict) else None
    total = usage.get("total_tokens")
    counts = [given, output, cached, 0 if reasoning is None else reasoning, 0 if total is None else total]
    if any(type(count) is not int or count < 0 for count in counts):
        return None
    assert isinstance(given, int) and isinstance(output, int) and isinstance(cached, int)  # checked just above
    if (
        cached > given
        or (reasoning is not None and reasoning > output)
        or (total is not None and total != given + output)
    ):
        return None
    return TokenUsage(input_tokens=given - cached, output_tokens=output, cache_read_input_tokens=cached)


def _item(part: Any, index: int, seed: str) -> dict[str, Any]:
    if isinstance(part, ToolCallPart):
        if isinstance(part.arguments, str):  # a freeform (custom) tool takes its input as text
            return {
                "type": "custom_tool_call",
                "id": f"ctc_{part.id}",
                "call_id": f"call_{part.id}",
                "name": part.name,
                "input": part.arguments,
                "status": "completed",
            }
        call = {
            "type": "function_call",
            "id": f"fc_{part.id}",
            "call_id": f"call_{part.id}",
            "name": part.name,
            "arguments": json.dumps(part.arguments, separators=(",", ":")),
            "status": "completed",
        }
        return call if part.namespace is None else {**call, "namespace": part.namespace}
    return {
        "type": "message",
        "id": f"msg_{seed[16:32]}{index:02d}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": part.text, "annotations": []}],
    }


def _events_of(events: Iterable[StreamEvent]) -> list[tuple[str, dict[str, Any]]]:
    return [(e.event, e.data) for e in events if isinstance(e.data, dict)]


class OpenAiResponses(Dialect):
    name = ApiDialect.OPENAI_RESPONSES
    model_path = "/v1/responses"
    count_path = None
    output_field = "max_output_tokens"
    ending_events = frozenset({*_ENDED, *_FAILED})
    passed_back_prefixes = ("x-ratelimit-", "x-request-id")

    def reject(self, route: str, headers: Mapping[str, str], body: Any) -> Rejection | None:
        if not isinstance(body, dict):
            return None
        if body.get("previous_response_id") is not None:
            return Rejection(False, "previous_response_id: not supported; send the whole conversation in `input`")
        bound = body.get("max_output_tokens")
        if bound is not None and self.output_bound(body) is None:
            return Rejection(False, f"max_output_tokens: a positive integer is required, got {bound!r}")
        return None

    def parse(self, body: dict[str, Any]) -> Conversation:
        system, messages, found = parse_input(body.get("instructions"), body.get("input"))
        return Conversation(system=system, messages=messages, tools=tool_names(body.get("tools"), "tools") | found)

    def reply(self, answer: Any) -> Message | None:
        output = answer.get("output") if isinstance(answer, dict) and answer.get("object") == "response" else None
        return parse_output(output) if isinstance(output, list) else None

    def output_bound(self, body: dict[str, Any]) -> int | None:
        bound = body.get("max_output_tokens")
        return bound if type(bound) is int and bound > 0 else None

    def render(self, reply: NeutralReply, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage]:
        output = [_item(part, index, reply.seed) for index, part in enumerate(reply.parts)]
        given, produced = estimate_tokens(body), estimate_tokens(output)
        usage = {
            "input_tokens": given,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": produced,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": given + produced,
        }
        response = {
            "id": f"resp_{reply.seed[16:40]}",
            "object": "response",
            "created_at": 0,  # derived from nothing but the request, like every byte of a policy's answer
            "status": "completed",
            "model": body.get("model", ""),
            "output": output,
            "usage": usage,
            "error": None,
            "incomplete_details": None,
        }
        return response, TokenUsage(input_tokens=given, output_tokens=produced)

    def events(self, answer: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        return response_events(answer)

    def assemble(self, events: Iterable[StreamEvent]) -> dict[str, Any]:
        return assemble_response(events)

    def finished(self, events: Iterable[StreamEvent]) -> bool:
        names = [event.event for event in events]
        return not _FAILED.intersection(names) and names[-1:] in ([_ENDED[0]], [_ENDED[1]])

    def stream_usage(self, events: list[StreamEvent]) -> TokenUsage | None:
        if not self.finished(events):
            return None
        endings = [data.get("response") for name, data in _events_of(events) if name in _ENDED]
        if len(endings) != 1 or not isinstance(endings[0], dict):
            return None
        return responses_usage(endings[0].get("usage"))

    def answer_usage(self, answer: object) -> TokenUsage | None:
        return responses_usage(answer.get("usage")) if isinstance(answer, dict) else None

    def error_body(self, kind: ErrorKind, message: str) -> dict[str, Any]:
        kind_type = "server_error" if kind is ErrorKind.SERVER else "invalid_request_error"
        code = "invalid_api_key" if kind is ErrorKind.AUTHENTICATION else None
        return {"error": {"message": message, "type": kind_type, "param": None, "code": code}}

    def key_message(self, presented: bool) -> str:
        return "Incorrect API key provided." if presented else "You didn't provide an API key."

    def tool_schemas(self, body: dict[str, Any]) -> dict[str, Any]:
        tools = body.get("tools")
        defined = [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
        return {str(t.get("name")): t["parameters"] for t in defined if isinstance(t.get("parameters"), dict)}

    def chain(self, request: dict[str, Any], answer: Any) -> MessageChain | None:
        return None  # a Responses answer is several items a next request repeats one by one; not chained yet
