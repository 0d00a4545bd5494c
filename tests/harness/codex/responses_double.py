"""A scripted OpenAI Responses API endpoint on a real socket, for driving the real Codex CLI where the model is
out of reach (run inside the test container: ``python3 responses_double.py PORT SCRIPT LOG``).

Each ``POST /v1/responses`` is answered with the next reply of SCRIPT (a JSON list; each reply a list of output
items), streamed as the documented server-sent events ``response.output_item.done`` per item and
``response.completed`` with usage; when the script is used up, a text "done". Every request body is appended to LOG
as one JSON line. Standard library only: the agent image has python3 and nothing else.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

_SCRIPT: list[list[dict[str, Any]]] = []
_LOG = ""
_DONE = [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}]


def _event(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        with open(_LOG, "a") as log:
            log.write(json.dumps({"path": self.path, "body": body}) + "\n")
        items = _SCRIPT.pop(0) if _SCRIPT else _DONE
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for index, item in enumerate(items):
            done = {"id": f"item_{index}", "status": "completed", **item}
            self.wfile.write(_event("response.output_item.done", {"output_index": index, "item": done}))
        usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 40}, "output_tokens": 7}
        completed = {"id": "resp", "status": "completed", "usage": {**usage, "total_tokens": 107}}
        self.wfile.write(_event("response.completed", {"response": completed}))

    def log_message(self, format: str, *args: Any) -> None:  # keep stderr for real errors
        return


if __name__ == "__main__":
    port, script, _LOG = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    with open(script) as source:
        _SCRIPT.extend(json.load(source))
    server = HTTPServer(("127.0.0.1", port), _Handler)
    print("listening", flush=True)
    server.serve_forever()
