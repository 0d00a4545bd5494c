"""The normalised transcript: what happened in an agent session, step by step, with who wrote each step.

Authorship is the point. A memory phrase in an agent step proves nothing (the agent can write anything); the
same phrase in an injected step proves the harness delivered it, through the channel the step names.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, Self

from pydantic import Field, JsonValue, model_validator

from ..contracts import ContractModel, Document
from ..contracts.usage import TokenUsage

__all__ = [
    "HOOK_RECORD",
    "HOOK_SUCCESS",
    "Channel",
    "ServerStatus",
    "Step",
    "StepSource",
    "TokenUsage",
    "ToolCall",
    "ToolResult",
    "Transcript",
    "call_input",
]


# The origin convention of a hook's records, shared by every harness's parser: an injected step's origin is
# ``<record>:<hook>`` with ``<record>`` two colon-separated words (``attachment:hook_additional_context``), and a
# system step whose origin starts with HOOK_RECORD is a hook's own record: HOOK_SUCCESS a success, any other a
# failure (grading lists failing hooks from them).
HOOK_RECORD = "attachment:hook_"
HOOK_SUCCESS = "attachment:hook_success"


class StepSource(StrEnum):
    USER = "user"  # the human prompt
    SYSTEM = "system"  # the harness's own context and notices (environment, listings, compaction summaries)
    INJECTED = "injected"  # context a hook added for the model: the memory system's channels
    AGENT = "agent"  # the model's own text and tool calls
    TOOL = "tool"  # tool results


class Channel(StrEnum):
    """How injected context reached the model."""

    PROMPT_TIME_RETRIEVAL = "prompt-time-retrieval"  # a UserPromptSubmit hook, on every prompt
    ANCHOR_TRIGGERED_RECALL = "anchor-triggered-recall"  # a PostToolUse hook, tied to the tool call that fired it
    SESSION_START = "session-start"  # a SessionStart hook
    OTHER = "other"  # any other hook event
    # A tool result of the declared memory system's own MCP server: the agent asked, the system answered. Tool
    # results are never injected steps; grading names this channel from the memory declaration's tool servers.
    MEMORY_TOOL_RETRIEVAL = "memory-tool-retrieval"
    # A file the harness loads by itself into the first message of every session (its user-level instructions
    # file), which the memory system declared by mounting its state there: the notes written down. A session file
    # may keep no record of it, so it is read from the gateway's record (:mod:`bench.grading.gateway_view`).
    STATIC_CONTEXT = "static-context"


class ToolCall(ContractModel):
    """A tool call as the model made it. An MCP server's tool is named ``mcp__<server>__<tool>`` whatever the
    harness calls it natively (grading recognises a memory system's tools by that prefix)."""

    id: str
    name: str
    input: dict[str, JsonValue]


def call_input(arguments: JsonValue) -> dict[str, JsonValue]:
    """A call's arguments as :attr:`ToolCall.input` holds them: an object as it is; anything else (a free-form
    tool's text input) under ``input``."""
    return arguments if isinstance(arguments, dict) else {"input": arguments}


class ToolResult(ContractModel):
    tool_use_id: str
    text: str
    is_error: bool = False


class Step(ContractModel):
    index: int = Field(ge=0)
    source: StepSource
    channel: Channel | None = None  # set exactly on injected steps
    origin: str  # the native record it came from, e.g. "attachment:hook_additional_context"
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    trigger_tool_use_id: str | None = None  # anchor recall: the tool call whose result fired the hook
    message_id: str | None = None  # agent steps: one model response may span several steps
    usage: TokenUsage | None = None
    timestamp: str | None = None

    @model_validator(mode="after")
    def _channel_only_when_injected(self) -> Self:
        if (self.channel is not None) != (self.source is StepSource.INJECTED):
            raise ValueError(f"step {self.index}: a channel is set exactly on injected steps (source {self.source})")
        if self.trigger_tool_use_id is not None and self.source is not StepSource.INJECTED:
            raise ValueError(f"step {self.index}: only an injected step has a triggering tool call")
        return self


class ServerStatus(ContractModel):
    """An MCP server as a step's harness reported it when it started (in the output of the step's run)."""

    step: int = Field(ge=0)  # the run (stream) that reported it
    name: str
    status: str  # "connected" when it is up; "failed", "pending", ... otherwise
    error: str = ""


class Transcript(Document):
    kind: Literal["agent-transcript"] = "agent-transcript"
    schema_version: Literal[1] = 1
    harness: str
    harness_version: str | None
    session_id: str
    steps: tuple[Step, ...]
    usage: TokenUsage  # counted once per model response
    cost_usd: float | None  # as the harness reported it; None when no report was given
    duration_ms: int | None
    started_at: str | None
    finished_at: str | None
    unknown_record_types: tuple[str, ...]  # tolerated and skipped; listed so a new harness version is noticed
    runs: int = Field(default=0, ge=0)  # the harness runs (stream outputs) read besides the session file
    servers: tuple[ServerStatus, ...] = ()  # every MCP server each run reported at its start

    @model_validator(mode="after")
    def _indexed_in_order(self) -> Self:
        if [step.index for step in self.steps] != list(range(len(self.steps))):
            raise ValueError("steps must be indexed 0, 1, 2, ... in order")
        return self

    def by_source(self, *sources: StepSource) -> tuple[Step, ...]:
        return tuple(step for step in self.steps if step.source in sources)
