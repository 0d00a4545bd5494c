"""Exploration effort: how much the agent looked around before it committed to something.

Counted up to the first edit (a call to an editing tool) or, when the agent never edits, up to its final
answer (agent text after its last tool call): the tool calls made before that point and the
distinct files it read. Memory that helps should shorten this search even when the outcome is the same.
"""

from __future__ import annotations

from enum import StrEnum

from ..contracts import ContractModel
from ..harness.transcript import StepSource, ToolCall, Transcript

__all__ = ["EDIT_TOOLS", "READ_TOOLS", "EffortEnd", "ExplorationEffort", "measure_effort"]

EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
READ_TOOLS = frozenset({"Read"})


class EffortEnd(StrEnum):
    FIRST_EDIT = "first-edit"
    FINAL_ANSWER = "final-answer"
    NEITHER = "neither"  # the session ended on a tool call: everything it did is counted


class ExplorationEffort(ContractModel):
    tool_calls: int
    files_read: tuple[str, ...]  # in first-read order
    ended_by: EffortEnd


def measure_effort(transcript: Transcript) -> ExplorationEffort:
    agent = transcript.by_source(StepSource.AGENT)
    # The final answer is agent text after the agent's last tool call; text before a tool call (possibly in
    # the same response, split over records) is narration, not an answer.
    final = None
    for step in reversed(agent):
        if step.tool_calls:
            break
        final = step.index if step.text.strip() else final
    calls: list[ToolCall] = []
    for step in agent:
        for call in step.tool_calls:
            if call.name in EDIT_TOOLS:
                return _effort(calls, EffortEnd.FIRST_EDIT)
            calls.append(call)
        if step.index == final:
            return _effort(calls, EffortEnd.FINAL_ANSWER)
    return _effort(calls, EffortEnd.NEITHER)


def _effort(calls: list[ToolCall], ended_by: EffortEnd) -> ExplorationEffort:
    read = [str(c.input.get("file_path")) for c in calls if c.name in READ_TOOLS and c.input.get("file_path")]
    return ExplorationEffort(tool_calls=len(calls), files_read=tuple(dict.fromkeys(read)), ended_by=ended_by)
