"""The captured real-CLI fixtures in data/ (refresh with `python tests/grading/capture.py`)."""

from __future__ import annotations

import json
from pathlib import Path

from scenario import ANCHOR_PHRASE, ANCHORED_FILE, RECALL_PHRASE, STARTUP_PHRASE

from bench.gateway import ExchangeRecord
from bench.grading import MemoryDeclaration, Transcript, parse_claude_session

__all__ = ["ARMS", "MEMORY", "captured", "exchanges", "transcript"]

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
