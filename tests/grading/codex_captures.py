"""A Codex CLI attempt recorded from the real CLI (codex-cli 0.169.0) through the real gateway in policy mode:
data/codex/ holds the gateway's exchange log (Responses dialect), the rollout file and both steps' ``--json``
output. Recorded by tests/harness/codex/test_codex_real_cli.py's ``ran`` fixture: a fresh step ("start the notes":
Write, then Edit, of /workspace/notes.md, ``env``) and a resumed one ("look the notes up": the ``notes`` MCP server's
``lookup``, then a Read), with an AGENTS.md, a prompt hook and a post-tool hook installed."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.gateway import ExchangeRecord
from bench.grading import InstalledHook, MemoryDeclaration, RunnerRecord, Transcript
from bench.harness import harness_named

__all__ = [
    "CODEX_MEMORY",
    "CODEX_RUNNER",
    "codex_exchanges",
    "codex_transcript",
    "rewritten",
]

DATA = Path(__file__).parent / "data" / "codex"
CODEX_RUNNER = RunnerRecord(prompts=("start the notes", "look the notes up"), cwd="/workspace", harness="codex")
INSTRUCTIONS = "/home/dev/.codex/AGENTS.md"
CODEX_MEMORY = MemoryDeclaration(
    phrases=("Prefer tabs.", "NOTE: tabs", "CONTEXT-PostToolUse-apply_patch", "CONTEXT-UserPromptSubmit-"),
    tool_servers=("notes",),
    static_files=(INSTRUCTIONS,),
    hooks=(InstalledHook(event="UserPromptSubmit"), InstalledHook(event="PostToolUse")),
)


def codex_exchanges() -> tuple[ExchangeRecord, ...]:
    return tuple(
        ExchangeRecord.model_validate_json(line) for line in (DATA / "exchanges.jsonl").read_bytes().splitlines()
    )


def codex_transcript() -> Transcript:
    streams = [(DATA / "fresh.jsonl").read_bytes(), (DATA / "resume.jsonl").read_bytes()]
    return harness_named("codex").parse_session((DATA / "rollout.jsonl").read_bytes(), streams)


def rewritten(
    records: tuple[ExchangeRecord, ...],
    request: Callable[[int, dict[str, Any]], None] = lambda sequence, body: None,
    answer: Callable[[int, dict[str, Any]], None] = lambda sequence, body: None,
) -> tuple[ExchangeRecord, ...]:
    """``records`` with each request body and answer body changed in place by ``request`` and ``answer`` (given a
    copy and the exchange's sequence)."""
    changed = []
    for record in records:
        body, reply = copy.deepcopy(record.request_body), copy.deepcopy(record.response_body)
        assert isinstance(body, dict) and isinstance(reply, dict)
        request(record.sequence, body)
        answer(record.sequence, reply)
        changed.append(record.model_copy(update={"request_body": body, "response_body": reply}))
    return tuple(changed)
