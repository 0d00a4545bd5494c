"""A provider double implementing the OpenAI Responses API on a real socket, for forward-mode tests.

It follows the API's documented shapes (platform.openai.com "Responses", "Streaming responses", "Error codes")
and what the Codex CLI was seen to accept (notes/codex-facts.md), independently of the gateway's own encoder:

- ``POST /v1/responses`` with ``Authorization: Bearer``; a missing or unknown key answers 401
  ``{"error": {"message", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}``; other paths
  404; a body that is not an object with ``model`` and ``input`` 400.
- ``stream: false`` answers the response object; ``stream: true`` answers ``text/event-stream``: ``response.created``,
  per item ``response.output_item.added``, deltas (``response.output_text.delta`` in 5-character pieces,
  ``response.function_call_arguments.delta``), ``response.output_item.done``, then ``response.completed`` with the
  response and its usage; every event numbered by ``sequence_number``.
- Usage: the first input item (the base prompt) is cached after it was seen once (``cached_tokens``, part of
  ``input_tokens``); ``total_tokens`` is input plus output. :attr:`ResponsesDouble.billed_usd` keeps what the
  account was billed, by the double's own arithmetic.
- Faults: ``response.failed`` mid-stream (billed: the model ran), a stream cut before ``response.completed``, a 500
  ``server_error``; usage omitted.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum, auto
from http.server import BaseHTTPRequestHandler
from typing import Any

from loopback import PROVIDER_KEY, RATES, serve_handler

Item = dict[str, Any]


class Fault(Enum):
    FAILED = auto()  # a stream that ends with response.failed
    CUT = auto()  # a stream whose connection closes before response.completed
    SERVER_ERROR = auto()  # 500 server_error
    NO_USAGE = auto()  # a completed response without usage


def said(words: str) -> list[Item]:
    return [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": words}]}]


def _error(status: int, message: str, code: str | None = None) -> bytes:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": code}}).encode()


@dataclass
class ResponsesDouble:
    model: Callable[[dict[str, Any]], list[Item]] = lambda body: said("a short answer from the model")
    faults: list[Fault] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    billed_usd: Decimal = Decimal(0)
    _prompts: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def usage(self, body: dict[str, Any], raw: bytes, output: list[Item]) -> dict[str, Any]:
        first = json.dumps(body["input"][:1], sort_keys=True)
        with self._lock:
            cached = len(first) // 4 if first in self._prompts else 0
            self._prompts.add(first)
        given, produced = max(1, len(raw) // 4), max(1, len(json.dumps(output)) // 4)
        cost = (given - cached) * RATES["input"] + cached * RATES["cache_read"] + produced * RATES["output"]
        with self._lock:
            self.billed_usd += cost / 1_000_000
        return {
            "input_tokens": given,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": produced,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": given + produced,
        }


def _items(output: list[Item], seed: str) -> list[Item]:
    """The model's items with the ids and status the API gives them."""
    done = []
    for index, item in enumerate(output):
        prefix = "msg" if item["type"] == "message" else "fc"
        done.append({"id": f"{prefix}_{seed}{index}", "status": "completed", **item})
    return done


def _item_events(index: int, item: Item) -> Iterator[Item]:
    yield {"type": "response.output_item.added", "output_index": index, "item": {**item, "status": "in_progress"}}
    if item["type"] == "message":
        text = item["content"][0]["text"]
        for i in range(0, len(text), 5):
            yield {"type": "response.output_text.delta", "item_id": item["id"], "output_index": index,
                   "content_index": 0, "delta": text[i : i + 5]}  # fmt: skip
    elif item["type"] == "function_call":
        yield {"type": "response.function_call_arguments.delta", "item_id": item["id"], "output_index": index,
               "delta": item["arguments"]}  # fmt: skip
    yield {"type": "response.output_item.done", "output_index": index, "item": item}


def _handler(double: ResponsesDouble) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.send_header("x-request-id", f"req_{hashlib.sha256(body).hexdigest()[:16]}")
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            if self.headers.get("authorization") != f"Bearer {PROVIDER_KEY}":
                return self._send(401, _error(401, "Incorrect API key provided.", "invalid_api_key"))
            if self.path.split("?", 1)[0] != "/v1/responses":
                return self._send(404, _error(404, "Not found"))
            try:
                body = json.loads(raw)
                assert isinstance(body, dict) and "model" in body and isinstance(body["input"], list)
            except (ValueError, AssertionError, KeyError):
                return self._send(400, _error(400, "input: Field required"))
            double.received.append(body)
            with double._lock:
                fault = double.faults.pop(0) if double.faults else None
            if fault is Fault.SERVER_ERROR:
                return self._send(500, _error(500, "The server had an error while processing your request."))
            seed = hashlib.sha256(raw).hexdigest()[:12]
            output = _items(double.model(body), seed)
            usage = double.usage(body, raw, output)
            response = {"id": f"resp_{seed}", "object": "response", "status": "completed", "model": body["model"],
                        "output": output, "usage": None if fault is Fault.NO_USAGE else usage}  # fmt: skip
            if not body.get("stream"):
                return self._send(200, json.dumps(response).encode())
            self._stream(response, fault)

        def _stream(self, response: dict[str, Any], fault: Fault | None) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            events: list[Item] = [{"type": "response.created", "response": {**response, "status": "in_progress",
                                                                             "output": [], "usage": None}}]  # fmt: skip
            for index, item in enumerate(response["output"]):
                events.extend(_item_events(index, item))
            events.append({"type": "response.completed", "response": response})
            if fault is Fault.FAILED:
                error = {"code": "server_error", "message": "The model failed to generate a response."}
                failed = {**response, "status": "failed", "error": error, "usage": None}
                events = [*events[:2], {"type": "response.failed", "response": failed}]
            if fault is Fault.CUT:
                events = events[:2]
            for number, event in enumerate(events):
                data = json.dumps({**event, "sequence_number": number})
                self.wfile.write(f"event: {event['type']}\ndata: {data}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True

    return Handler


@contextmanager
def serve_responses(double: ResponsesDouble) -> Iterator[str]:
    """Serve ``double`` on 127.0.0.1 and yield its base URL."""
    with serve_handler(_handler(double)) as url:
        yield url


# ---- requests as the Codex CLI sends them ------------------------------------------------------------------------

CODEX_TOOLS: list[Item] = [
    {"type": "function", "name": "exec_command", "strict": False,
     "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}},
    {"type": "custom", "name": "apply_patch", "format": {"type": "grammar", "syntax": "lark", "definition": "start"}},
    {"type": "tool_search", "execution": "client"},
    {"type": "web_search", "external_web_access": True},
]  # fmt: skip


def developer(text: str) -> Item:
    return {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": text}]}


def user(*texts: str) -> Item:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": t} for t in texts]}


def assistant(text: str) -> Item:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


def call(call_id: str, name: str, arguments: dict[str, Any], namespace: str | None = None) -> Item:
    item = {"type": "function_call", "call_id": call_id, "name": name, "arguments": json.dumps(arguments)}
    return item if namespace is None else {**item, "namespace": namespace}


def output(call_id: str, text: str | list[Item]) -> Item:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def responses_body(*items: Item, stream: bool = True, **extra: Any) -> dict[str, Any]:
    """A request as Codex sends it: the base prompt first, the full history, its tools, ``store: false``."""
    return {
        "model": "gpt-5.5",
        "input": [developer("You are a coding agent."), *items],
        "tools": CODEX_TOOLS,
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "store": False,
        "stream": stream,
        **extra,
    }


def codex_headers(key: str | None, kind: str = "turn") -> dict[str, str]:
    headers = {"content-type": "application/json", "originator": "codex_exec"}
    headers["x-codex-turn-metadata"] = json.dumps({"request_kind": kind, "turn_trigger": "exec"})
    return headers if key is None else {**headers, "authorization": f"Bearer {key}"}
