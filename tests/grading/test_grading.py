"""The three layers and effort, on the captured real-CLI sessions and on planted variations of them."""

from __future__ import annotations

from cli_captures import MEMORY, exchanges, transcript
from scenario import ANCHOR_PHRASE, ANCHORED_FILE, RECALL_PHRASE, STARTUP_PHRASE

from bench.grading import (
    Channel,
    EffortEnd,
    MemoryDeclaration,
    OutcomeGrade,
    Step,
    StepSource,
    ToolCall,
    ToolResult,
    Transcript,
    grade,
    grade_delivery,
    grade_use,
    measure_effort,
)

PASSED = OutcomeGrade(verifier_passed=True, audit_clean=True)


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
    delivered = grade_delivery(transcript("with-hooks"), exchanges("with-hooks"), MEMORY)
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
    delivered = grade_delivery(planted, exchanges("without-hooks"), MEMORY)
    assert not delivered.delivered and delivered.outside_channels == ()
    assert delivered.received_by_model == ()  # the model's own turns are not what it was sent
    assert delivered.gateway_agrees


def test_transcript_and_gateway_disagreement_is_tampered_never_delivered() -> None:
    delivered = grade_delivery(transcript("with-hooks"), exchanges("without-hooks"), MEMORY)
    assert not delivered.delivered and not delivered.gateway_agrees and delivered.tampered
    assert delivered.channel(Channel.PROMPT_TIME_RETRIEVAL).phrases == (RECALL_PHRASE,)
    assert delivered.channel(Channel.PROMPT_TIME_RETRIEVAL).gateway_phrases == ()


def test_use_needs_delivery_then_an_act_with_no_other_source() -> None:
    used = grade_use(transcript("with-hooks"), MEMORY)
    assert [(e.marker, e.channel, e.tool) for e in used.evidence] == [
        (ANCHORED_FILE, Channel.ANCHOR_TRIGGERED_RECALL, "Read")
    ]
    assert not grade_use(transcript("without-hooks"), MEMORY).used
    t = transcript("with-hooks")
    first_read = next(s.index for s in t.steps if s.source is StepSource.TOOL)
    listing = _tool(f"notes.txt {ANCHORED_FILE}")  # e.g. `ls` output, before the anchor recall arrives
    seen_first = _renumbered(t, (*t.steps[:first_read], listing, *t.steps[first_read:]))
    graded = grade_use(seen_first, MEMORY)
    assert not graded.used and graded.unattributable == (ANCHORED_FILE,)


def test_talking_about_a_marker_is_not_use() -> None:
    t = _append(transcript("without-hooks"), _agent(f"I should open {ANCHORED_FILE}"))
    identifiers = MemoryDeclaration(phrases=(RECALL_PHRASE,), identifiers=("parse_ledger",))
    assert not grade_use(t, MEMORY).used and not grade_use(t, identifiers).used


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
    hooked = grade(transcript("with-hooks"), exchanges("with-hooks"), MEMORY, failed)
    assert hooked.delivered.delivered and hooked.used.used and not hooked.outcome.passed
    plain = grade(transcript("without-hooks"), exchanges("without-hooks"), MEMORY, PASSED)
    assert not plain.delivered.delivered and not plain.used.used and plain.outcome.passed
    assert type(hooked).model_validate_json(hooked.model_dump_json()) == hooked


def test_use_needs_the_gateway_to_agree_with_the_delivery() -> None:
    assert grade(transcript("with-hooks"), exchanges("with-hooks"), MEMORY, PASSED).used.used
    disagreeing = grade(transcript("with-hooks"), exchanges("without-hooks"), MEMORY, PASSED)
    assert not disagreeing.used.used and disagreeing.used.evidence == ()


def test_a_marker_only_in_a_comment_the_agent_wrote_is_not_use() -> None:
    t = transcript("with-hooks")
    first_act = next(s.index for s in t.steps if s.source is StepSource.AGENT and s.tool_calls and s.index > 0)
    marker = "parse_ledger"
    memory = MemoryDeclaration(phrases=(RECALL_PHRASE,), identifiers=(marker,))
    origin = "attachment:hook_additional_context:UserPromptSubmit"
    told = Step(
        index=0, source=StepSource.INJECTED, channel=Channel.PROMPT_TIME_RETRIEVAL, origin=origin, text=f"Use {marker}."
    )
    comment = ToolCall(id="w", name="Write", input={"file_path": "/w/a.py", "content": f"x = 1  # {marker} later\n"})
    act = ToolCall(id="b", name="Bash", input={"command": f"python3 -c 'import m; m.{marker}()'"})
    in_comment = _renumbered(t, (*t.steps[:first_act], told, _agent("", comment)))
    assert not grade_use(in_comment, memory).used
    acted = _renumbered(t, (*t.steps[:first_act], told, _agent("", act)))
    assert [e.marker for e in grade_use(acted, memory).evidence] == [marker]


def test_a_marker_in_a_system_or_attachment_step_first_is_another_source() -> None:
    t = transcript("with-hooks")
    first_read = next(s.index for s in t.steps if s.source is StepSource.TOOL)
    listing = Step(index=0, source=StepSource.SYSTEM, origin="attachment:directory", text=f"notes.txt {ANCHORED_FILE}")
    seen_first = _renumbered(t, (*t.steps[:first_read], listing, *t.steps[first_read:]))
    graded = grade_use(seen_first, MEMORY)
    assert not graded.used and graded.unattributable == (ANCHORED_FILE,)
