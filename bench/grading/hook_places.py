"""Hook context a harness places as an instruction of its own among the turns, read by its place.

A harness that marks no hook context in its text (Codex: a developer message holding the hook's bare text) is read
by the place its instruction holds in the conversation (:attr:`~bench.gateway.neutral.TextPart.instruction`), which
no tool and no model can write: after a tool call still awaiting its result (that call fired it), after the user's
prompt, or anywhere else (a session's start or resumption). Which hook that place means is the harness's own
knowledge (:meth:`~bench.harness.base.InjectionFormat.placed_hook`); a marked harness places none.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..gateway.neutral import Role, TextPart, ToolCallPart, ToolResultPart
from ..harness.base import InjectedBlock
from .chain import Conversation

__all__ = ["PlacedHook", "placed_hooks"]


@dataclass(frozen=True)
class PlacedHook:
    sequence: int  # the exchange that first carried it
    message: int  # its message's index in the conversation
    block: InjectedBlock


def placed_hooks(conversation: Conversation) -> Iterator[PlacedHook]:
    """Every instruction the harness placed that its format reads as a hook's context, in the order carried."""
    injection = conversation.harness.injection
    open_calls: list[ToolCallPart] = []  # calls whose result has not come yet, newest last
    after_prompt = False
    for held in conversation.history:
        for part in held.message.parts:
            if isinstance(part, ToolCallPart):
                open_calls.append(part)
                after_prompt = False
            elif isinstance(part, ToolResultPart):
                open_calls = [call for call in open_calls if call.id != part.id]
                after_prompt = False
            elif part.instruction and held.message.role is Role.USER:
                trigger = open_calls[-1].qualified_name if open_calls else None
                block = injection.placed_hook(part.text, trigger, after_prompt and trigger is None)
                if block is not None:
                    yield PlacedHook(held.sequence, held.index, block)
            elif isinstance(part, TextPart) and not part.instruction:
                # what the user wrote; the harness's own texts (its environment notice) are no prompt
                after_prompt = held.message.role is Role.USER and not injection.is_harness_text(part.text)
