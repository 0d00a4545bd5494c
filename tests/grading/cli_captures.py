"""The captured real-CLI fixtures in data/ (refresh with `python tests/grading/capture.py`)."""

from __future__ import annotations

import json
from pathlib import Path

from scenario import ANCHOR_PHRASE, ANCHORED_FILE, FOLLOW_UP, PROMPT, RECALL_PHRASE, STARTUP_PHRASE

from bench.gateway import ExchangeRecord
from bench.grading import (
    Conversation,
    MemoryDeclaration,
    RunnerRecord,
    Transcript,
    harness_conversation,
)
from bench.harness.claude_code.session_log import parse_claude_session

__all__ = ["ARMS", "MEMORY", "captured", "conversation", "exchanges", "runner", "transcript"]

DATA = Path(__file__).parent / "data"
ARMS = ("with-hooks", "without-hooks")
MEMORY = MemoryDeclaration(phrases=(STARTUP_PHRASE, RECALL_PHRASE, ANCHOR_PHRASE), anchored_paths=(ANCHORED_FILE,))


def captured(arm: str, part: str) -> bytes:
    return (DATA / f"{arm}.{part}.jsonl").read_bytes()


def transcript(arm: str) -> Transcript:
    return parse_claude_session(captured(arm, "session"), [captured(arm, "stream"), captured(arm, "resume.stream")])


def exchanges(arm: str) -> tuple[ExchangeRecord, ...]:
    return tuple(ExchangeRecord.model_validate_json(line) for line in captured(arm, "exchanges").splitlines())


def meta(arm: str) -> dict[str, str]:
    return json.loads((DATA / "capture.json").read_text())[arm]


def runner(arm: str) -> RunnerRecord:
    """The runner's side of a captured arm: its two prompts and its workspace (no step times were captured)."""
    return RunnerRecord(prompts=(PROMPT, FOLLOW_UP), cwd=meta(arm)["workspace"])


def conversation(arm: str, records: tuple[ExchangeRecord, ...] | list[ExchangeRecord] | None = None) -> Conversation:
    """The harness's conversation of a captured arm (or of ``records`` read as that arm's)."""
    return harness_conversation(exchanges(arm) if records is None else records, runner(arm))
