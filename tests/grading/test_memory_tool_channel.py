"""The third channel: memory that reaches the model as the result of the declared memory system's own MCP tool.

Counted only for a tool of a declared server (``mcp__<server>__<tool>``), never for another server's tool or a
built-in one, and only agreed when the gateway log shows that result reaching the model.
"""

from __future__ import annotations

from bench.contracts.usage import TokenUsage
from bench.gateway import ExchangeRecord
from bench.grading import Channel, MemoryDeclaration, OutcomeGrade, RunnerRecord, grade
from bench.harness.transcript import Step, StepSource, ToolCall, ToolResult, Transcript
from tests.grading.exchanges import messages_exchange

OWN, OTHER, BUILTIN = "mcp__memory__search_nodes", "mcp__elsewhere__search", "Read"
RESULTS = {
    "t-own": "Status H rows are holds: holds are not money that moved (38.75 counted twice)",
    "t-other": "the export must use a decimal comma",
    "t-read": "register an upgrade step",
}
MEMORY = MemoryDeclaration(
    phrases=("holds are not money that moved", "a decimal comma", "register an upgrade step"),
    identifiers=("38.75",),
    tool_servers=("memory",),
)


PROMPT = "Why are Status H rows dropped?"
RUNNER = RunnerRecord(prompts=(PROMPT,), cwd="/workspace")
INPUTS = {
    "t-own": {"query": "Status H"},
    "t-other": {"query": "export"},
    "t-read": {"file_path": "/workspace/notes.txt"},
}
NAMES = {"t-own": OWN, "t-other": OTHER, "t-read": BUILTIN}


def _write(answer: str) -> dict[str, object]:
    return {"type": "tool_use", "id": "t-write", "name": "Write", "input": {"file_path": "A.md", "content": answer}}


def _transcript(answer: str) -> Transcript:
    calls = tuple(ToolCall(id=i, name=NAMES[i], input=INPUTS[i]) for i in NAMES)  # type: ignore[arg-type]
    steps = [
        Step(index=0, source=StepSource.USER, origin="user", text=PROMPT),
        Step(index=1, source=StepSource.AGENT, origin="assistant", tool_calls=calls),
        Step(
            index=2,
            source=StepSource.TOOL,
            origin="user:tool_result",
            tool_results=tuple(ToolResult(tool_use_id=i, text=t) for i, t in RESULTS.items()),
        ),
        Step(
            index=3,
            source=StepSource.AGENT,
            origin="assistant",
            tool_calls=(ToolCall(id="t-write", name="Write", input={"file_path": "A.md", "content": answer}),),
        ),
    ]
    return Transcript(
        harness="claude-code", harness_version=None, session_id="s", steps=tuple(steps), usage=TokenUsage(),
        cost_usd=None, duration_ms=None, started_at=None, finished_at=None, unknown_record_types=(),
    )  # fmt: skip


def _exchange(results: dict[str, str]) -> list[ExchangeRecord]:
    """The harness's conversation: the prompt, answered with the three calls, then the request carrying the
    results, answered with the write."""
    calls = [{"type": "tool_use", "id": i, "name": NAMES[i], "input": INPUTS[i]} for i in NAMES]
    answers = [
        {"type": "tool_result", "tool_use_id": i, "content": [{"type": "text", "text": t}]} for i, t in results.items()
    ]
    prompt = {"role": "user", "content": PROMPT}
    first = messages_exchange(0, [prompt], {"type": "message", "role": "assistant", "content": calls})
    write = {"type": "message", "role": "assistant", "content": [_write("total 38.75")]}
    return [
        first,
        messages_exchange(
            1, [prompt, {"role": "assistant", "content": calls}, {"role": "user", "content": answers}], write
        ),
    ]


OUTCOME = OutcomeGrade(verifier_passed=True, audit_clean=True)


def test_only_the_declared_servers_tool_results_deliver_and_the_gateway_agrees() -> None:
    graded = grade(_transcript("total 38.75"), _exchange(RESULTS), MEMORY, OUTCOME, RUNNER)
    tool = graded.delivered.channel(Channel.MEMORY_TOOL_RETRIEVAL)
    assert tool.phrases == ("holds are not money that moved",) and tool.first_step == 2
    assert tool.gateway_phrases == tool.phrases and graded.delivered.gateway_agrees
    assert all(not c.phrases for c in graded.delivered.channels if c.channel is not Channel.MEMORY_TOOL_RETRIEVAL)
    evidence = graded.used.evidence
    assert [(e.marker, e.channel, e.delivered_at, e.used_at) for e in evidence] == [
        ("38.75", Channel.MEMORY_TOOL_RETRIEVAL, 2, 3)  # the conversation's messages: results, then the write
    ]


def test_without_declared_servers_no_tool_result_delivers() -> None:
    plain = MEMORY.model_copy(update={"tool_servers": ()})
    graded = grade(_transcript("total 38.75"), _exchange(RESULTS), plain, OUTCOME, RUNNER)
    assert not graded.delivered.delivered and not graded.used.used


def test_a_result_the_model_never_received_breaks_agreement() -> None:
    unseen = {key: text for key, text in RESULTS.items() if key != "t-own"}
    graded = grade(_transcript("total 38.75"), _exchange(unseen), MEMORY, OUTCOME, RUNNER)
    tool = graded.delivered.channel(Channel.MEMORY_TOOL_RETRIEVAL)
    assert tool.phrases and tool.gateway_phrases == () and not graded.delivered.gateway_agrees
