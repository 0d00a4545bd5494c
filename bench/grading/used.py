"""Layer two, used: did the agent act on something only the delivered memory said.

Read from the harness's conversation in the gateway log, like delivery: what the model was sent, and the model's
own answers (never the session file, which only cross-checks: :mod:`.tamper`). Messages are placed by their index
in the conversation.

Definition. A marker (an anchored path or an identifier the challenge declares) is *used* when all hold:
  1. context of one of the memory's channels (:func:`.delivery.received_contexts`) carried the marker (a memory
     tool's result not merely echoing its call's input);
  2. a later answer of the model makes a tool call whose input contains the marker in some string value outside a
     comment (opening the anchored file, passing the identifier to a command): acting, not talking. A marker the
     agent wrote only into a comment (``#`` or ``//`` to the end of a line) is the agent's own note, not an act;
  3. nothing else the model was sent before that call carried the marker: the system prompt, the user's prompts,
     the harness's other reminders, any other tool's output. The agent had no other source.
Rule 3 is deliberately conservative: an agent that saw the file listed by ``ls`` and then also got the memory
is not counted as using it, so "used" can under-count but never credits the memory with what the workspace
already showed. Agent text that merely mentions a marker is never use.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from pydantic import JsonValue

from ..contracts import ContractModel
from ..gateway.neutral import Role
from ..harness.transcript import Channel
from .chain import Conversation, message_texts
from .gateway_view import ReceivedContext, tool_calls, tool_results
from .memory_declaration import MemoryDeclaration

__all__ = ["UseEvidence", "UseGrade", "grade_use"]


class UseEvidence(ContractModel):
    marker: str
    channel: Channel  # the channel of the delivering context
    delivered_at: int  # the conversation's message that carried it
    used_at: int  # the conversation's message (the model's answer) that made the acting call
    tool: str


class UseGrade(ContractModel):
    evidence: tuple[UseEvidence, ...]  # one per used marker
    unattributable: tuple[str, ...]  # markers delivered and acted on, but seen elsewhere before the act

    @property
    def used(self) -> bool:
        return bool(self.evidence)


def _strings(value: JsonValue) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


_COMMENT = re.compile(r"(?:#|//).*$", re.M)


def _acts_on(given: JsonValue, marker: str) -> bool:
    """The call's input names the marker somewhere other than a comment the agent wrote."""
    return any(marker in _COMMENT.sub("", text) for text in _strings(given))


def _elsewhere(conversation: Conversation, received: Sequence[ReceivedContext]) -> list[tuple[int, str]]:
    """Everything the model was sent that is not the memory's context, by message (-1: the system prompt)."""
    system = conversation.request(conversation.members[0]).system if conversation.members else ()
    texts: list[tuple[int, str]] = [(-1, "\n".join(system))]
    credited: dict[int, list[str]] = {}
    for context in received:
        credited.setdefault(context.message, []).append(context.text)

    def without_credited(message: int, text: str) -> str:
        for context in credited.get(message, ()):
            text = text.replace(context, "")
        return text

    for held in conversation.history:
        if held.message.role is Role.USER:
            texts += [(held.index, without_credited(held.index, text)) for text in message_texts(held.message)]
    memory_results = {(c.message, c.hook) for c in received if c.channel is Channel.MEMORY_TOOL_RETRIEVAL}
    for result in tool_results(conversation):
        if (result.message, result.tool) not in memory_results:
            texts.append((result.message, result.output))
        texts += [(result.message, without_credited(result.message, reminder)) for reminder in result.reminders]
    return texts


def grade_use(conversation: Conversation, memory: MemoryDeclaration, received: Sequence[ReceivedContext]) -> UseGrade:
    """``received``: what the memory's channels carried, by the gateway (:func:`.delivery.received_contexts`)."""
    evidence: list[UseEvidence] = []
    unattributable: list[str] = []
    elsewhere = _elsewhere(conversation, received)
    calls = tool_calls(conversation)
    for marker in memory.markers:
        delivery = min((c for c in received if c.carries(marker)), key=lambda c: c.message, default=None)
        if delivery is None:
            continue
        act = next((c for c in calls if c.message > delivery.message and _acts_on(c.input, marker)), None)
        if act is None:
            continue
        if any(marker in text for message, text in elsewhere if message < act.message):
            unattributable.append(marker)
        else:
            evidence.append(
                UseEvidence(
                    marker=marker,
                    channel=delivery.channel,
                    delivered_at=delivery.message,
                    used_at=act.message,
                    tool=act.name,
                )
            )
    return UseGrade(evidence=tuple(evidence), unattributable=tuple(unattributable))
