"""Layer one, delivered: did the memory reach the model, and through which channel.

The gateway log is the source, since the agent cannot write it: only the harness's own conversation counts
(:mod:`.chain`; a request the agent crafts with the key from its environment does not), only its requests the model
answered (a request the provider refused, or the gateway refused for it, reached no model), and injected context
only where and how the harness places it (:mod:`.gateway_view`), from a hook the runner installed. A phrase is delivered
through a channel when such context of that channel, or a result of the memory system's own declared MCP tool,
carried it.

The session file stays the source of the normalised transcript, which names the step of each delivery; its
delivering steps must say what the conversation says. Every record grading relies on is matched against the
conversation (:mod:`.tamper`): a mismatch marks the arm tampered, and such an arm is never graded as delivered or
not delivered. Matches in user or system steps are reported apart, as ``outside_channels``: context the harness gave
both arms alike, such as the project's CLAUDE.md, is not a memory channel; a user-level CLAUDE.md the memory system
itself declared (its state mounted there) is the static-context channel.
``received_by_model`` is every phrase anywhere in what the conversation sent the model, whoever wrote it: in the
control arm, one there is contamination.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from ..contracts import ContractModel
from ..gateway.exchange import ExchangeRecord
from .chain import Conversation, harness_conversation
from .delivered import delivering_steps
from .gateway_view import (
    ReceivedContext,
    hook_contexts,
    received_texts,
    static_contexts,
    tool_calls,
    tool_input_text,
    tool_results,
)
from .memory import MemoryDeclaration
from .tamper import tamper_findings
from .transcript import Channel, StepSource, Transcript

__all__ = ["ChannelDelivery", "DeliveryGrade", "answered", "grade_delivery", "received_contexts", "state_reads"]


class ChannelDelivery(ContractModel):
    channel: Channel
    phrases: tuple[str, ...]  # found in delivering steps of this channel in the transcript
    first_step: int | None = Field(ge=0)  # the first such step
    gateway_phrases: tuple[str, ...]  # found in this channel's context in the harness's conversation

    @property
    def agrees(self) -> bool:
        return self.phrases == self.gateway_phrases


class DeliveryGrade(ContractModel):
    channels: tuple[ChannelDelivery, ...]  # every channel, in declaration order
    outside_channels: tuple[str, ...]  # phrases in user or system steps
    received_by_model: tuple[str, ...]  # phrases anywhere in non-assistant text of the harness's conversation
    gateway_agrees: bool  # per channel, the transcript and the gateway log found the same phrases
    tampered: tuple[str, ...] = ()  # where the session file and the gateway's conversation disagree
    # The unintended channel: the agent's own tool calls naming where the memory's state is mounted ("Bash
    # toolu_..."), read from the gateway's record. Reported on its own, never counted as delivery.
    state_reads: tuple[str, ...] = ()

    @property
    def delivered(self) -> bool:
        """Delivered means the model received it, by the gateway's record, and the session file agrees."""
        return not self.tampered and self.gateway_agrees and any(channel.gateway_phrases for channel in self.channels)

    def channel(self, channel: Channel) -> ChannelDelivery:
        return next(found for found in self.channels if found.channel is channel)


def _found(phrases: Sequence[str], texts: Sequence[str]) -> tuple[str, ...]:
    return tuple(phrase for phrase in phrases if any(phrase in text for text in texts))


def received_contexts(conversation: Conversation, memory: MemoryDeclaration) -> tuple[ReceivedContext, ...]:
    """What the memory's channels carried to the model: installed hooks' context, its own tools' results, and the
    files it declared that the harness loads by itself."""
    hooks = tuple(context for context in hook_contexts(conversation) if memory.installed(context.hook))
    prefixes = memory.tool_prefixes
    tools = tuple(
        ReceivedContext(result.sequence, result.message, Channel.MEMORY_TOOL_RETRIEVAL, result.tool, result.output)
        for result in tool_results(conversation)
        if prefixes and result.tool.startswith(prefixes) and not result.is_error
    )
    return static_contexts(conversation, memory.static_files) + hooks + tools


def state_reads(conversation: Conversation, memory: MemoryDeclaration) -> tuple[str, ...]:
    """The agent's tool calls (as the model made them) whose input names a path of the memory's restored state."""
    return tuple(
        f"{call.name} {call.id}"
        for call in tool_calls(conversation)
        if any(path in tool_input_text(call.input) for path in memory.state_paths)
    )


def answered(conversation: Conversation) -> Conversation:
    """The conversation's requests a model answered: what a model never received was never delivered to it."""
    members = [member for member in conversation.members if member.status == 200 and member.refusal is None]
    return Conversation(members=members)


def grade_delivery(
    transcript: Transcript, exchanges: Sequence[ExchangeRecord], memory: MemoryDeclaration
) -> DeliveryGrade:
    conversation = harness_conversation(exchanges)
    received = received_contexts(answered(conversation), memory)
    delivering = delivering_steps(transcript, memory)
    channels = []
    for channel in Channel:
        steps = [s for s in delivering if s.channel is channel]
        phrases = _found(memory.phrases, [s.text for s in steps])
        first = next((s.index for s in steps if any(p in s.text for p in phrases)), None)
        gateway = _found(memory.phrases, [r.text for r in received if r.channel is channel])
        channels.append(ChannelDelivery(channel=channel, phrases=phrases, first_step=first, gateway_phrases=gateway))
    outside = _found(memory.phrases, [s.text for s in transcript.by_source(StepSource.USER, StepSource.SYSTEM)])
    return DeliveryGrade(
        channels=tuple(channels),
        outside_channels=outside,
        received_by_model=_found(memory.phrases, received_texts(conversation)),
        gateway_agrees=all(found.agrees for found in channels),
        tampered=tamper_findings(transcript, conversation),
        state_reads=state_reads(conversation, memory),
    )
