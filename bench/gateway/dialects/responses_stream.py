"""Server-sent events of the Responses API: a response as a stream, and a stream reassembled as a client does.

The sequence the gateway writes is the documented one (see :mod:`.openai_responses`), each event numbered by its
``sequence_number``; text and arguments arrive in small deltas, so a client must really reassemble them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..stream import StreamEvent, text_chunks

__all__ = ["assemble_response", "response_events"]

_LIFECYCLE = frozenset({"response.created", "response.in_progress", "response.queued"})
_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})


def _item_events(index: int, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The events of one output item, from ``output_item.added`` to ``output_item.done``."""
    place = {"item_id": item["id"], "output_index": index}
    kind = item["type"]
    if kind == "message":
        yield {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {**item, "status": "in_progress", "content": []},
        }
        for slot, part in enumerate(item["content"]):
            at = {**place, "content_index": slot}
            yield {"type": "response.content_part.added", **at, "part": {**part, "text": ""}}
            for piece in text_chunks(part["text"]):
                yield {"type": "response.output_text.delta", **at, "delta": piece}
            yield {"type": "response.output_text.done", **at, "text": part["text"]}
            yield {"type": "response.content_part.done", **at, "part": part}
    else:
        field, name = (
            ("arguments", "function_call_arguments") if kind == "function_call" else ("input", "custom_tool_call_input")
        )
        yield {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {**item, "status": "in_progress", field: ""},
        }
        for piece in text_chunks(item[field]):
            yield {"type": f"response.{name}.delta", **place, "delta": piece}
        yield {"type": f"response.{name}.done", **place, field: item[field]}
    yield {"type": "response.output_item.done", "output_index": index, "item": item}


def response_events(response: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The SSE event sequence that streams ``response`` (a complete response of message and tool call items)."""
    opening = {**response, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": opening}]
    for index, item in enumerate(response["output"]):
        events.extend(_item_events(index, item))
    events.append({"type": "response.completed", "response": response})
    for number, event in enumerate(events):
        yield event["type"], {**event, "sequence_number": number}


def assemble_response(events: Iterable[StreamEvent]) -> dict[str, Any]:
    """Rebuild the response a stream described: the terminal event's response, with the items of
    ``output_item.done`` as its output when it carries none (clients read the items, as Codex does)."""
    response: dict[str, Any] = {}
    items: dict[int, Any] = {}
    for event in events:
        data: dict[str, Any] = event.data if isinstance(event.data, dict) else {}
        reported = data.get("response")
        if (event.event in _LIFECYCLE or event.event in _TERMINAL) and isinstance(reported, dict):
            response = {**response, **reported}
        elif event.event == "response.output_item.done" and isinstance(data.get("output_index"), int):
            items[data["output_index"]] = data.get("item")
        elif event.event == "error":
            response["error"] = {k: v for k, v in data.items() if k not in ("type", "sequence_number")}
    if items and not response.get("output"):
        response["output"] = [items[index] for index in sorted(items)]
    return response
