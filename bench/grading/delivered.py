"""The steps through which memory reached the model, by channel: the one list delivery and use both read.

Two kinds of step deliver. An injected step names its channel itself, and delivers only when its hook is one the
runner installed (a hook the agent wrote into a settings file of its own is not the memory) or, for a file the
harness loads by itself, when the memory system declared that file (its state mounted there).
A tool result delivers only when it answers a call of one of the memory system's declared MCP tools (the
memory-tool channel): a result of any other tool shows what the agent chose to read, which may be what the agent
wrote. A result the harness marked as an error delivers nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..harness.transcript import Channel, Step, StepSource, Transcript
from .gateway_view import tool_input_text
from .memory_declaration import MemoryDeclaration

__all__ = ["DeliveringStep", "delivering_steps", "hook_of", "memory_tool_call_ids"]


@dataclass(frozen=True)
class DeliveringStep:
    index: int
    channel: Channel
    text: str
    asked: str = ""  # a tool result's: its call's input (what the agent itself supplied)

    def carries(self, needle: str) -> bool:
        return needle in self.text and needle not in self.asked


def hook_of(step: Step) -> str:
    """The hook name an injected step's origin ends with (``attachment:hook_additional_context:PostToolUse:Read``)."""
    parts = step.origin.split(":", 2)
    return parts[2] if len(parts) == 3 else ""


def memory_tool_call_ids(transcript: Transcript, memory: MemoryDeclaration) -> frozenset[str]:
    """The ids of the agent's calls to the declared memory system's tools."""
    prefixes = memory.tool_prefixes
    return frozenset(
        call.id
        for step in transcript.by_source(StepSource.AGENT)
        for call in step.tool_calls
        if prefixes and call.name.startswith(prefixes)
    )


def delivering_steps(transcript: Transcript, memory: MemoryDeclaration) -> tuple[DeliveringStep, ...]:
    """Every injected step and every memory-tool result, in transcript order."""
    calls = memory_tool_call_ids(transcript, memory)
    asked = {
        call.id: tool_input_text(call.input)
        for step in transcript.by_source(StepSource.AGENT)
        for call in step.tool_calls
    }
    found = [
        DeliveringStep(step.index, step.channel, step.text)
        for step in transcript.by_source(StepSource.INJECTED)
        if step.channel is not None and memory.delivers(step.channel, hook_of(step))
    ]
    found += [
        DeliveringStep(step.index, Channel.MEMORY_TOOL_RETRIEVAL, result.text, asked.get(result.tool_use_id, ""))
        for step in transcript.by_source(StepSource.TOOL)
        for result in step.tool_results
        if result.tool_use_id in calls and not result.is_error
    ]
    return tuple(sorted(found, key=lambda delivered: delivered.index))
