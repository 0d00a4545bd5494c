"""A stdio MCP server (newline-delimited JSON-RPC, standard library only) with one tool, ``lookup``, answering
``NOTE: <query>`` and the names of the environment variables it was given, for the real-CLI test."""

import json
import os
import sys


def _reply(request_id: object, result: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()


_TOOL = {"name": "lookup", "description": "Look a note up.", "inputSchema": {"type": "object", "properties": {}}}
for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        continue
    if method == "initialize":
        version = message["params"].get("protocolVersion", "2025-06-18")
        _reply(
            request_id,
            {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "n", "version": "1"}},
        )
    elif method == "tools/list":
        _reply(request_id, {"tools": [_TOOL]})
    elif method == "tools/call":
        query = message["params"].get("arguments", {}).get("query", "")
        text = f"NOTE: {query} ENV: {' '.join(sorted(os.environ))}"
        _reply(request_id, {"content": [{"type": "text", "text": text}]})
    else:
        error = {"code": -32601, "message": "no such method"}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}) + "\n")
        sys.stdout.flush()
