"""Helpers for gateway tests: real HTTP servers on loopback, spoken to with a real HTTP client."""

from __future__ import annotations

import hashlib
import http.client
import json
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench.gateway import ArmKey, PolicyPin

KEY = "sk-arm-one"
OTHER_KEY = "sk-arm-two"

POLICY: dict[str, Any] = {
    "rules": [
        {
            "name": "recall-seen",
            "when": {"contains": ["remember the ledger"], "part": "any"},
            "reply": [{"type": "tool_use", "name": "Read", "input": {"file_path": "/w/ledger.py"}}],
        },
        {"name": "after-tools", "when": {"tool_result_seen": True}, "reply": [{"type": "text", "text": "finished"}]},
    ],
    "default": [{"type": "text", "text": "a plain answer that is long enough to be split into several deltas"}],
}


def arm(label: str, key: str, cap: Decimal = Decimal(1)) -> ArmKey:
    return ArmKey(label=label, key_sha256=hashlib.sha256(key.encode()).hexdigest(), cap_usd=cap)


def write_policy(directory: Path, policy: dict[str, Any] = POLICY) -> PolicyPin:
    data = json.dumps(policy).encode()
    (directory / "policy.json").write_bytes(data)
    return PolicyPin(path="policy.json", sha256=hashlib.sha256(data).hexdigest())


def post(url: str, path: str, body: Any, key: str | None = KEY) -> tuple[int, str, bytes]:
    """POST JSON with the headers Claude Code sends; returns status, content type and the raw body."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    headers = {"content-type": "application/json", "anthropic-version": "2023-06-01"}
    if key is not None:
        headers["x-api-key"] = key
    connection.request("POST", path, body=json.dumps(body), headers=headers)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, response.getheader("content-type", ""), data


def request_body(text: str, stream: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "stream": stream,
        "system": [{"type": "text", "text": "You are a coding agent."}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
        **extra,
    }
