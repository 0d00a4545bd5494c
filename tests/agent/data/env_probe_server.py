"""A stdio MCP server that answers with the names of the variables in its own environment (never their values)."""

import json
import os
import sys

for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "initialize":
        version = message["params"]["protocolVersion"]
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "probe", "version": "1"},
        }
    elif method == "tools/list":
        schema = {"type": "object", "properties": {}}
        result = {"tools": [{"name": "variables", "description": "List variable names", "inputSchema": schema}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "server sees: " + " ".join(sorted(os.environ))}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
