"""Layer one, delivered: did the memory reach the model, and through which channel.

The gateway log is the source, since the agent cannot write it: only the harness's own conversation counts,
chained from the runner's prompts (:mod:`.chain`; a request the agent crafts with the key from its environment does
not), only its requests the model answered (a request the provider refused, or the gateway refused for it, reached
no model), and injected context only where and how the harness places it (:mod:`.gateway_view`), from a hook the
runner installed, a tool of the memory system's declared MCP servers, or a file the system declared. A phrase is
delivered through a channel when such context of that channel carried it (a tool's result does not deliver what
its call's input carried: the agent supplied that).

The session file only cross-checks: the phrases it shows per channel must be the gateway's, and every record
grading relies on is matched against the conversation (:mod:`.tamper`). Any finding marks the arm tampered, and
such an arm is never graded as delivered or not delivered. Matches in user or system steps are reported apart, as
``outside_channels``. ``received_by_model`` is every phrase anywhere in what the harness sent the model, whoever
wrote it: in the control arm, one there is contamination. ``foreign_channels`` are memory channels the arm's
attachment did not install that reached its model anyway (a hook, an MCP server or an instructions file of the
agent's own making): in any arm, the pair is excluded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pydantic import Field

from ..contracts import ContractModel
from ..gateway.policy import offered_tools
from ..harness.transcript import Channel, StepSource, Transcript
from .chain import Conversation, model_requests
from .delivered import delivering_steps
from .findings import TamperFinding
from .gateway_view import (
    ReceivedContext,
    hook_contexts,
    received_texts,
    static_contexts,
    tool_calls,
    tool_input_text,
    tool_results,
)
from .memory_declaration import MemoryDeclaration
from .restored import RestoredState, content_reads, static_mismatches
from .tamper import tamper_findings

__all__ = [
    "ChannelDelivery",
    "DeliveryGrade",
    "answered",
    "foreign_channels",
    "grade_delivery",
    "received_contexts",
    "state_reads",
]

_MCP = "mcp__"


class ChannelDelivery(ContractModel):
    channel: Channel
    phrases: tuple[str, ...]  # found in delivering steps of this channel in the transcript (the cross-check)
    first_step: int | None = Field(ge=0)  # the first such step
    gateway_phrases: tuple[str, ...]  # found in this channel's context in the harness's conversation
    first_message: int | None = Field(default=None, ge=0)  # the conversation's first message carrying one

    @property
    def agrees(self) -> bool:
        return self.phrases == self.gateway_phrases


class DeliveryGrade(ContractModel):
    channels: tuple[ChannelDelivery, ...]  # every channel, in declaration order
    outside_channels: tuple[str, ...]  # phrases in user or system steps
    received_by_model: tuple[str, ...]  # phrases anywhere in non-assistant text of the harness's conversation
    gateway_agrees: bool  # per channel, the transcript and the gateway log found the same phrases
    tampered: tuple[TamperFinding, ...] = ()  # the conversation's own findings, and the session file's against it
    # The unintended channel: the agent's own tool calls naming where the memory's state is mounted
    # ("message 7: Bash toolu_..."), read from the model's own answers. Reported on its own, never delivery.
    state_reads: tuple[str, ...] = ()
    foreign_channels: tuple[str, ...] = ()  # memory channels the attachment did not install, where they showed
    # what a memory channel carried that the runner's copy of the restored state does not give (:mod:`.restored`)
    not_rederived: tuple[str, ...] = ()

    @property
    def delivered(self) -> bool:
        """Delivered means the model received it, by the gateway's record, the session file agrees, and what the
        channels carried is what the restored state gives."""
        carried = any(channel.gateway_phrases for channel in self.channels)
        return not self.tampered and not self.not_rederived and self.gateway_agrees and carried

    def channel(self, channel: Channel) -> ChannelDelivery:
        return next(found for found in self.channels if found.channel is channel)


def _found(phrases: Sequence[str], texts: Sequence[str]) -> tuple[str, ...]:
    return tuple(phrase for phrase in phrases if any(phrase in text for text in texts))


def received_contexts(conversation: Conversation, memory: MemoryDeclaration) -> tuple[ReceivedContext, ...]:
    """What the memory's channels carried to the model: installed hooks' context, its own tools' results, and the
    files it declared that the harness loads by itself."""
    hooks = tuple(context for context in hook_contexts(conversation) if memory.installed(context.hook))
    prefixes = memory.tool_prefixes
    asked = {call.id: tool_input_text(call.input) for call in tool_calls(conversation)}
    tools = tuple(
        ReceivedContext(
            result.sequence,
            result.message,
            Channel.MEMORY_TOOL_RETRIEVAL,
            result.tool,
            result.output,
            asked.get(result.tool_use_id, ""),
        )
        for result in tool_results(conversation)
        if prefixes and result.tool.startswith(prefixes) and not result.is_error
    )
    return static_contexts(conversation, memory.static_files) + hooks + tools


def state_reads(
    conversation: Conversation, memory: MemoryDeclaration, state: RestoredState | None = None
) -> tuple[str, ...]:
    """The agent's tool calls (as the model made them) whose input names a path of the memory's restored state, and
    its tool results carrying the state's content however they got it (``state``: the runner's copy)."""
    named = [
        f"message {call.message}: {call.name} {call.id} names the memory's state"
        for call in tool_calls(conversation)
        if any(path in tool_input_text(call.input) for path in memory.state_paths)
    ]
    carried = content_reads(conversation, state, memory.tool_prefixes) if state is not None else ()
    return (*named, *carried)


def foreign_channels(conversation: Conversation, memory: MemoryDeclaration) -> tuple[str, ...]:
    """Memory channels that reached the model though the arm's attachment did not install them: a hook's context
    from a hook not installed, an MCP server's tools offered or answering when no declared server is theirs, and a
    non-empty instructions file the harness loaded that no system declared (certification refuses a start tree
    holding one, so any other is of the agent's making, in its workspace or its home)."""
    found = [
        f"message {c.message}: {c.hook} hook context"
        for c in hook_contexts(conversation)
        if not memory.installed(c.hook)
    ]
    declared = memory.tool_prefixes
    offered: dict[str, int] = {}
    for exchange in model_requests(conversation):
        request = conversation.request(exchange)
        announced = conversation.harness.offered_tools(request.tools, request.system)
        for name in sorted(offered_tools(request) | announced):
            # a server's namespace (``mcp__<server>``) offers its tools: it is the declared server's, too
            if name.startswith(_MCP) and not (declared and f"{name}__".startswith(declared)):
                offered.setdefault(name, exchange.sequence)
    found += [f"exchange {sequence}: MCP tool {name} offered" for name, sequence in offered.items()]
    found += [
        f"message {r.message}: MCP tool {r.tool} answered"
        for r in tool_results(conversation)
        if r.tool.startswith(_MCP) and not (declared and r.tool.startswith(declared))
    ]
    found += [
        f"message {c.message}: instructions file {c.hook}"
        for c in static_contexts(conversation, None)
        if c.text and c.hook not in memory.static_files
    ]
    return tuple(dict.fromkeys(found))


def answered(conversation: Conversation) -> Conversation:
    """The conversation as far as a model received it: what a model never received was never delivered to it. Each
    request carries the whole history before it (the chain checks that), so a message reached a model when a request
    the model answered came at or after the one that first carried it."""
    members = [member for member in conversation.members if member.status == 200 and member.refusal is None]
    last = max((member.sequence for member in members), default=-1)
    history = [held for held in conversation.history if held.sequence <= last]
    return replace(conversation, members=members, history=history)


def grade_delivery(
    transcript: Transcript, conversation: Conversation, memory: MemoryDeclaration, state: RestoredState | None = None
) -> DeliveryGrade:
    """``state`` is the runner's copy of the memory's restored state (None: the arm mounted none, or a captured
    session is read without one)."""
    received = received_contexts(answered(conversation), memory)
    delivering = delivering_steps(transcript, memory)
    channels = []
    for channel in Channel:
        steps = [s for s in delivering if s.channel is channel]
        phrases = tuple(p for p in memory.phrases if any(s.carries(p) for s in steps))
        first = next((s.index for s in steps if any(s.carries(p) for p in phrases)), None)
        contexts = [r for r in received if r.channel is channel]
        gateway = tuple(p for p in memory.phrases if any(r.carries(p) for r in contexts))
        at = next(
            (r.message for r in sorted(contexts, key=lambda r: r.message) if any(r.carries(p) for p in gateway)), None
        )
        channels.append(
            ChannelDelivery(
                channel=channel, phrases=phrases, first_step=first, gateway_phrases=gateway, first_message=at
            )
        )
    outside = _found(memory.phrases, [s.text for s in transcript.by_source(StepSource.USER, StepSource.SYSTEM)])
    return DeliveryGrade(
        channels=tuple(channels),
        outside_channels=outside,
        received_by_model=_found(memory.phrases, received_texts(conversation)),
        gateway_agrees=all(found.agrees for found in channels),
        tampered=tamper_findings(transcript, conversation),
        state_reads=state_reads(conversation, memory, state),
        foreign_channels=foreign_channels(conversation, memory),
        not_rederived=static_mismatches(received, state) if state is not None else (),
    )
