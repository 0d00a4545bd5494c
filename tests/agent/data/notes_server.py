"""A stdio MCP server an agent could write for itself: one tool, answering with what it was told to remember.

With ``--variables`` it answers with the names of the variables in its own environment instead (never their values).
"""

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
            "serverInfo": {"name": "n", "version": "1"},
        }
    elif method == "tools/list":
        schema = {"type": "object", "properties": {"query": {"type": "string"}}}
        result = {"tools": [{"name": "search", "description": "Search the notes", "inputSchema": schema}]}
    elif method == "tools/call":
        text = "The quartz ledger convention applies."
        if sys.argv[1:] == ["--variables"]:
            text = "server sees: " + " ".join(sorted(os.environ))
        result = {"content": [{"type": "text", "text": text}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
