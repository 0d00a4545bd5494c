"""The three layers and effort, on the captured real-CLI sessions and on planted variations of them."""

from __future__ import annotations

from typing import Any

from cli_captures import MEMORY, captured, conversation, exchanges, runner, transcript
from scenario import ANCHOR_PHRASE, ANCHORED_FILE, PROMPT, RECALL_PHRASE, STARTUP_PHRASE

from bench.gateway import ExchangeRecord
from bench.grading import (
    Channel,
    EffortEnd,
    MemoryDeclaration,
    OutcomeGrade,
    RunnerRecord,
    Step,
    StepSource,
    ToolCall,
    ToolResult,
    Transcript,
    grade,
    grade_delivery,
    grade_use,
    harness_conversation,
    measure_effort,
)
from bench.grading.delivery import received_contexts
from tests.grading.exchanges import messages_exchange

PASSED = OutcomeGrade(verifier_passed=True, audit_clean=True)


def _use(arm: str, memory: MemoryDeclaration = MEMORY, records: list[ExchangeRecord] | None = None):  # type: ignore[no-untyped-def]
    held = conversation(arm, records)
    return grade_use(held, memory, received_contexts(held, memory))


def _listed_first(arm: str) -> list[ExchangeRecord]:
    """The captured arm with the anchored file's name in the first tool output (an ``ls``-like listing)."""
    raw = captured(arm, "exchanges").replace(b"alpha beta", f"alpha beta {ANCHORED_FILE}".encode())
    return [ExchangeRecord.model_validate_json(line) for line in raw.splitlines()]


def _renumbered(t: Transcript, steps: tuple[Step, ...]) -> Transcript:
    return t.model_copy(update={"steps": tuple(s.model_copy(update={"index": i}) for i, s in enumerate(steps))})


def _append(t: Transcript, *steps: Step) -> Transcript:
    return _renumbered(t, t.steps + steps)


def _tool(text: str) -> Step:
    results = (ToolResult(tool_use_id="t", text=text),)
    return Step(index=0, source=StepSource.TOOL, origin="user:tool_result", tool_results=results)


def _agent(text: str = "", *calls: ToolCall) -> Step:
    return Step(index=0, source=StepSource.AGENT, origin="assistant", text=text, tool_calls=calls)


def test_hooked_arm_delivers_through_each_channel_and_the_gateway_agrees() -> None:
    delivered = grade_delivery(transcript("with-hooks"), conversation("with-hooks"), MEMORY)
    assert delivered.channel(Channel.PROMPT_TIME_RETRIEVAL).phrases == (RECALL_PHRASE,)
    assert delivered.channel(Channel.ANCHOR_TRIGGERED_RECALL).phrases == (ANCHOR_PHRASE,)
    assert delivered.channel(Channel.SESSION_START).phrases == (STARTUP_PHRASE,)
    assert delivered.channel(Channel.OTHER).phrases == ()
    assert delivered.gateway_agrees and delivered.delivered
    assert delivered.channel(Channel.ANCHOR_TRIGGERED_RECALL).gateway_phrases == (ANCHOR_PHRASE,)


def test_agent_authored_echo_is_not_delivery() -> None:
    # The captured control arm's agent wrote the memory phrase itself (and again after resuming).
    t = transcript("without-hooks")
    assert any(RECALL_PHRASE in s.text for s in t.by_source(StepSource.AGENT))
    planted = _append(t, _agent(f"Anchor: {ANCHOR_PHRASE}"), _tool(ANCHOR_PHRASE))
    delivered = grade_delivery(planted, conversation("without-hooks"), MEMORY)
    assert not delivered.delivered and delivered.outside_channels == ()
    assert delivered.received_by_model == ()  # the model's own turns are not what it was sent
    assert delivered.gateway_agrees


def test_transcript_and_gateway_disagreement_is_tampered_never_delivered() -> None:
    delivered = grade_delivery(transcript("with-hooks"), conversation("without-hooks"), MEMORY)
    assert not delivered.delivered and not delivered.gateway_agrees and delivered.tampered
    assert delivered.channel(Channel.PROMPT_TIME_RETRIEVAL).phrases == (RECALL_PHRASE,)
    assert delivered.channel(Channel.PROMPT_TIME_RETRIEVAL).gateway_phrases == ()


def test_use_needs_delivery_then_an_act_with_no_other_source() -> None:
    used = _use("with-hooks")
    assert [(e.marker, e.channel, e.tool) for e in used.evidence] == [
        (ANCHORED_FILE, Channel.ANCHOR_TRIGGERED_RECALL, "Read")
    ]
    assert [(e.delivered_at, e.used_at) for e in used.evidence] == [(2, 3)]  # messages of the conversation
    assert not _use("without-hooks").used
    graded = _use("with-hooks", records=_listed_first("with-hooks"))  # e.g. `ls` output before the recall
    assert not graded.used and graded.unattributable == (ANCHORED_FILE,)


def test_talking_about_a_marker_is_not_use() -> None:
    identifiers = MemoryDeclaration(phrases=(RECALL_PHRASE,), identifiers=("parse_ledger",))
    assert not _use("without-hooks").used and not _use("without-hooks", identifiers).used


def test_effort_counts_exploration_before_the_answer_or_first_edit() -> None:
    hooked, plain = measure_effort(transcript("with-hooks")), measure_effort(transcript("without-hooks"))
    assert hooked.tool_calls == 2 and hooked.ended_by is EffortEnd.FINAL_ANSWER
    assert [p.rsplit("/", 1)[1] for p in hooked.files_read] == ["notes.txt", ANCHORED_FILE]
    assert plain.tool_calls == 1
    edit = ToolCall(id="e", name="Edit", input={"file_path": "/w/a.py", "old_string": "a", "new_string": "b"})
    t = transcript("without-hooks")
    early = t.steps[: next(s.index for s in t.steps if s.tool_calls)]
    edited = _append(t.model_copy(update={"steps": early}), _agent("", edit))
    assert measure_effort(edited) == measure_effort(edited).model_copy(update={"tool_calls": 0, "files_read": ()})
    assert measure_effort(edited).ended_by is EffortEnd.FIRST_EDIT


def test_layers_are_independent_fields() -> None:
    failed = OutcomeGrade(verifier_passed=True, audit_clean=False)
    hooked = grade(transcript("with-hooks"), exchanges("with-hooks"), MEMORY, failed, runner("with-hooks"))
    assert hooked.delivered.delivered and hooked.used.used and not hooked.outcome.passed
    plain = grade(transcript("without-hooks"), exchanges("without-hooks"), MEMORY, PASSED, runner("without-hooks"))
    assert not plain.delivered.delivered and not plain.used.used and plain.outcome.passed
    assert type(hooked).model_validate_json(hooked.model_dump_json()) == hooked


def test_use_is_read_from_the_gateway_not_the_session_file() -> None:
    assert grade(transcript("with-hooks"), exchanges("with-hooks"), MEMORY, PASSED, runner("with-hooks")).used.used
    # The with-hooks session file set against the without-hooks gateway log: the session claims the recall, the
    # model was never sent it, so nothing was used (and the arm is tampered).
    disagreeing = grade(transcript("with-hooks"), exchanges("without-hooks"), MEMORY, PASSED, runner("without-hooks"))
    assert not disagreeing.used.used and disagreeing.used.evidence == () and disagreeing.delivered.tampered


def _told_then(call: dict[str, Any], marker: str) -> list[ExchangeRecord]:
    """A conversation: the prompt with a prompt-time hook's context naming ``marker``, answered by ``call``."""
    told = f"<system-reminder>\nUserPromptSubmit hook additional context: Use {marker}.\n</system-reminder>"
    prompt = {"role": "user", "content": [{"type": "text", "text": told}, {"type": "text", "text": PROMPT}]}
    answer = {"type": "message", "role": "assistant", "content": [call]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": "ok"}]}
    return [
        messages_exchange(0, [prompt], answer),
        messages_exchange(1, [prompt, {"role": "assistant", "content": [call]}, result], {}),
    ]


def test_a_marker_only_in_a_comment_the_agent_wrote_is_not_use() -> None:
    marker = "parse_ledger"
    memory = MemoryDeclaration(phrases=(RECALL_PHRASE,), identifiers=(marker,))
    comment = {"type": "tool_use", "id": "w", "name": "Write",
               "input": {"file_path": "/w/a.py", "content": f"x = 1  # {marker} later\n"}}  # fmt: skip
    act = {"type": "tool_use", "id": "b", "name": "Bash", "input": {"command": f"python3 -c 'import m; m.{marker}()'"}}
    record = RunnerRecord(prompts=(PROMPT,), cwd="/w")
    for call, used in ((comment, False), (act, True)):
        held = harness_conversation(_told_then(call, marker), record)
        assert held.findings == []
        graded = grade_use(held, memory, received_contexts(held, memory))
        assert [e.marker for e in graded.evidence] == ([marker] if used else [])
