"""The fourth channel: a file the harness loads by itself (Claude Code's user-level CLAUDE.md) that the memory system
declared by mounting its state there: the static-context baseline, the notes written down.

The session file and the request are shaped as Claude Code 2.1.332 writes and sends them (seen in the demo's gateway
logs): an ``instructions`` attachment with ``files[]`` of ``type: "User"``, and a reminder text block in the first
user message, ``Contents of <path> (user's private global instructions for all projects):`` and the file.
"""

from __future__ import annotations

import json
from typing import Any

from bench.agent.harness_files import container_path
from bench.gateway import ExchangeRecord
from bench.grading import (
    Channel,
    MemoryDeclaration,
    OutcomeGrade,
    RunnerRecord,
    TamperKind,
    grade,
)
from bench.harness.claude_code.cli import USER_MEMORY_PATH as USER_MEMORY
from bench.harness.claude_code.session_log import parse_claude_session
from tests.grading.exchanges import messages_exchange

PATH = str(container_path(USER_MEMORY))
NOTES = "# Project notes\n\n## adr/0002.md\n\nWe drop them, because holds are not money that moved: 38.75 twice.\n"
PROMPT = "Why are Status H rows dropped?"
DECLARED = MemoryDeclaration(phrases=("holds are not money that moved",), identifiers=("38.75",), static_files=(PATH,))
RUNNER = RunnerRecord(prompts=(PROMPT,), cwd="/w")
WRITE = {"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": "/w/A.md", "content": "38.75"}}


def _reminder(path: str, notes: str) -> dict[str, str]:
    header = f"Contents of {path} (user's private global instructions for all projects):"
    return {
        "type": "text",
        "text": f"<system-reminder>\nCodebase and user instructions.\n\n{header}\n\n{notes}\n</system-reminder>",
    }


def _session(notes: str) -> bytes:
    records: list[dict[str, Any]] = [
        {"type": "attachment", "attachment": {"type": "instructions", "files": [
            {"path": PATH, "type": "User", "content": notes},
            {"path": "/w/CLAUDE.md", "type": "Project", "content": "Run the tests with pytest."},
        ]}},
        {"type": "user", "message": {"role": "user", "content": PROMPT}},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [WRITE]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "File created"}
        ]}},
    ]  # fmt: skip
    return b"".join(json.dumps({"sessionId": "s", **record}).encode() + b"\n" for record in records)


def _exchanges(first_blocks: list[dict[str, str]]) -> list[ExchangeRecord]:
    first = {"role": "user", "content": [*first_blocks, {"type": "text", "text": PROMPT}]}
    answer = {"type": "message", "role": "assistant", "content": [WRITE]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "File created"}]}
    return [
        messages_exchange(0, [first], answer),
        messages_exchange(1, [first, {"role": "assistant", "content": [WRITE]}, result], {}),
    ]


def _graded(session_notes: str, sent: list[dict[str, str]], memory: MemoryDeclaration = DECLARED) -> Any:
    transcript = parse_claude_session(_session(session_notes))
    return grade(transcript, _exchanges(sent), memory, OutcomeGrade(verifier_passed=True, audit_clean=True), RUNNER)


def test_a_declared_user_level_file_delivers_through_its_own_channel_and_is_used() -> None:
    graded = _graded(NOTES, [_reminder(PATH, NOTES)])
    delivery = graded.delivered
    channel = delivery.channel(Channel.STATIC_CONTEXT)
    assert channel.phrases == channel.gateway_phrases == ("holds are not money that moved",)
    assert delivery.delivered and not delivery.tampered
    assert [c.channel for c in delivery.channels if c.gateway_phrases] == [Channel.STATIC_CONTEXT]
    (evidence,) = graded.used.evidence  # the identifier only the notes gave, written into the answer
    assert (evidence.marker, evidence.channel, evidence.tool) == ("38.75", Channel.STATIC_CONTEXT, "Write")


def test_an_undeclared_file_delivers_nothing_but_its_phrases_still_reach_the_model() -> None:
    """In the control arm (or another system's) the file is no memory channel: received, it is contamination."""
    graded = _graded(NOTES, [_reminder(PATH, NOTES)], DECLARED.model_copy(update={"static_files": ()}))
    assert not graded.delivered.delivered and not graded.used.used and not graded.delivered.tampered
    assert graded.delivered.received_by_model == ("holds are not money that moved",)
    assert graded.delivered.foreign_channels == (f"message 0: instructions file {PATH}",)


def test_a_session_file_claiming_notes_the_model_never_got_is_tampered() -> None:
    graded = _graded(NOTES, [_reminder(PATH, "# Project notes\n\nNothing here.")])
    assert not graded.delivered.delivered
    assert [(f.kind, f.step, f.message) for f in graded.delivered.tampered] == [
        (TamperKind.SESSION_ADDED, 0, None),
        (TamperKind.SESSION_MISSING, None, 0),
    ]


def test_the_block_counts_only_where_the_harness_places_it_not_in_a_tool_result_or_under_another_path() -> None:
    elsewhere = _reminder("/w/CLAUDE.md", NOTES)  # a project CLAUDE.md: certification refuses one at the start
    graded = _graded("# Project notes\n", [elsewhere])
    assert not graded.delivered.channel(Channel.STATIC_CONTEXT).gateway_phrases
    assert graded.delivered.foreign_channels == ("message 0: instructions file /w/CLAUDE.md",)  # the agent's own
    printed = _exchanges([_reminder(PATH, "# Project notes")])
    printed[1].request_body["messages"][2]["content"][0]["content"] = _reminder(PATH, NOTES)["text"]  # type: ignore[index]
    transcript = parse_claude_session(_session("# Project notes"))
    delivery = grade(transcript, printed, DECLARED, OutcomeGrade(verifier_passed=True, audit_clean=True), RUNNER)
    delivery = delivery.delivered
    assert not delivery.channel(Channel.STATIC_CONTEXT).gateway_phrases  # an agent's `cat` of the file is its output
