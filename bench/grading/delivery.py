"""Layer one, delivered: did the memory reach the model, and through which channel.

A phrase is delivered through a channel when a delivering step of that channel contains it: an injected step,
or a result of the memory system's own declared MCP tool (:mod:`.delivered`). An agent step never counts (the
agent can write any phrase itself), nor does any other tool result (it shows what the agent chose to read, which
may be what the agent wrote). Matches in user or system steps are reported apart, as
``outside_channels``: context the harness gave both arms alike, such as a CLAUDE.md, is not a memory channel.
Each channel's finding is cross-checked against the gateway log, the record of what the model was sent.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from ..contracts import ContractModel
from ..gateway.exchange import ExchangeRecord
from .delivered import delivering_steps
from .gateway_view import hook_contexts, memory_tool_results, received_texts
from .memory import MemoryDeclaration
from .transcript import Channel, StepSource, Transcript

__all__ = ["ChannelDelivery", "DeliveryGrade", "grade_delivery"]


class ChannelDelivery(ContractModel):
    channel: Channel
    phrases: tuple[str, ...]  # found in injected steps of this channel in the transcript
    first_step: int | None = Field(ge=0)  # the first such step
    gateway_phrases: tuple[str, ...]  # found in hook context of this channel in what the model was sent

    @property
    def agrees(self) -> bool:
        return self.phrases == self.gateway_phrases


class DeliveryGrade(ContractModel):
    channels: tuple[ChannelDelivery, ...]  # every channel, in declaration order
    outside_channels: tuple[str, ...]  # phrases in user or system steps
    received_by_model: tuple[str, ...]  # phrases anywhere in non-assistant text the model was sent
    gateway_agrees: bool  # per channel, the transcript and the gateway log found the same phrases

    @property
    def delivered(self) -> bool:
        return any(channel.phrases for channel in self.channels)

    def channel(self, channel: Channel) -> ChannelDelivery:
        return next(found for found in self.channels if found.channel is channel)


def _found(phrases: Sequence[str], texts: Sequence[str]) -> tuple[str, ...]:
    return tuple(phrase for phrase in phrases if any(phrase in text for text in texts))


def grade_delivery(
    transcript: Transcript, exchanges: Sequence[ExchangeRecord], memory: MemoryDeclaration
) -> DeliveryGrade:
    received = hook_contexts(exchanges) + memory_tool_results(exchanges, memory.tool_prefixes)
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
        received_by_model=_found(memory.phrases, received_texts(exchanges)),
        gateway_agrees=all(found.agrees for found in channels),
    )
