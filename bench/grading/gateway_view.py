"""What the gateway log says reached the model: the source delivery is read from, since the agent cannot write it.

Only the harness's own conversation is read (:mod:`.chain`), each message as first carried (its history), and
injected context only where the harness places it, in its own format (its
:class:`~bench.harness.base.InjectionFormat`):

- as a whole user-message text block, outside any tool result (prompt-time and session-start context), which no
  tool of the agent can produce;
- after a tool result's own output, for the post-tool hook of the tool that produced the result. A hook block of
  any other hook inside a tool result, or one followed by more of the tool's output, is the tool's output: text
  the agent can print.

A file the harness loads by itself (its user-level instructions file) is read where the harness places it: in a
harness text block that is a whole user-message text block. Like a prompt-time hook's block, no tool of the agent
can produce one there.

Assistant turns are never read as received: they are the model's own words, read as the model's answer gave them,
never as the harness repeated them (a repetition is only checked against the answer: :mod:`.chain`). They are read
to learn which tool a ``tool_use`` id names, so that a tool result can be attributed to the memory system's declared
MCP tools (the memory-tool channel), and what the agent did.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

from ..gateway.neutral import Conversation as Request
from ..gateway.neutral import Role, TextPart, ToolCallPart, ToolResultPart
from ..harness.transcript import Channel
from .chain import Conversation
from .hook_places import placed_hooks
from .repeats import result_text, same_call

__all__ = [
    "GatewayToolCall",
    "GatewayToolResult",
    "ReceivedContext",
    "hook_contexts",
    "received_texts",
    "static_contexts",
    "tool_calls",
    "tool_input_text",
    "tool_results",
    "user_prompts",
    "user_texts",
]


@dataclass(frozen=True)
class ReceivedContext:
    sequence: int  # the exchange that first carried it
    message: int  # its message's index in the conversation
    channel: Channel
    hook: str  # the hook's name, or the tool's name for a tool result
    text: str
    asked: str = ""  # a tool result's: the call's input as the model gave it (what the agent itself supplied)

    def carries(self, needle: str) -> bool:
        """Whether the context carries ``needle`` as the memory's: a tool that echoes its call's input does not
        deliver what the agent put into the call."""
        return needle in self.text and needle not in self.asked


@dataclass(frozen=True)
class GatewayToolCall:
    sequence: int  # the exchange whose answer made the call
    message: int  # the answer's index in the conversation
    id: str
    name: str
    input: Any  # as the model gave it
    ran: Any  # as the harness ran it (its normalizations: :mod:`.repeats`)


@dataclass(frozen=True)
class GatewayToolResult:
    sequence: int  # the exchange that first carried it
    message: int
    tool_use_id: str
    tool: str  # the name of the call it answers ("" when no call of that id is in the request)
    output: str  # the tool's own output, without the reminders the harness appended
    reminders: tuple[str, ...]  # the harness's blocks after the output, in order
    is_error: bool


def tool_results(conversation: Conversation) -> tuple[GatewayToolResult, ...]:
    """Every tool result of the conversation, as first carried, in order."""
    names = {call.id: call.name for call in tool_calls(conversation)}
    found: list[GatewayToolResult] = []
    for held in conversation.history:
        if held.message.role is Role.ASSISTANT:
            continue
        for part in held.message.parts:
            if isinstance(part, ToolResultPart):
                output, reminders = conversation.harness.injection.split_tool_output(result_text(part))
                found.append(
                    GatewayToolResult(
                        held.sequence, held.index, part.id, names.get(part.id, ""), output, reminders, part.is_error
                    )
                )
    return tuple(found)


def tool_calls(conversation: Conversation) -> tuple[GatewayToolCall, ...]:
    """Every tool call the model's answers in the conversation made, in order, with its input as the model gave it
    and as the harness ran it (as a later request repeated it when one did: with its tools' defaults filled in, as
    the session file records it; :mod:`.repeats`). A call is named as the harness's hooks and transcript name it
    (an MCP tool ``mcp__<server>__<tool>``, :attr:`~bench.gateway.neutral.ToolCallPart.qualified_name`)."""
    repeated: dict[str, ToolCallPart] = {}
    for exchange in conversation.members:
        for message in conversation.request(exchange).messages:
            if message.role is Role.ASSISTANT:
                repeated.update({part.id: part for part in message.parts if isinstance(part, ToolCallPart)})
    calls: list[GatewayToolCall] = []
    for held in conversation.history:
        if held.message.role is not Role.ASSISTANT:
            continue
        for part in held.message.parts:
            if isinstance(part, ToolCallPart):
                name = part.qualified_name
                again = repeated.get(part.id)
                ran = (
                    again.arguments
                    if again is not None and same_call(part, again, conversation.cwd, conversation.harness)
                    else conversation.harness.ran_input(name, part.arguments, conversation.cwd)
                )
                calls.append(GatewayToolCall(held.sequence, held.index, part.id, name, part.arguments, ran))
    return tuple(calls)


def _usermessage_blocks(conversation: Conversation) -> Iterator[tuple[int, int, str]]:
    """(sequence, message index, text) of every user-message text part outside tool results, the client's placed
    instructions aside (they are read by their place: :mod:`.hook_places`)."""
    for held in conversation.history:
        if held.message.role is Role.USER:
            for part in held.message.parts:
                if isinstance(part, TextPart) and not part.instruction:
                    yield held.sequence, held.index, part.text


def hook_contexts(conversation: Conversation) -> tuple[ReceivedContext, ...]:
    """Every hook context the harness placed, once per place (message and hook), in the order first carried."""
    seen: dict[tuple[int, str, str], ReceivedContext] = {}
    injection = conversation.harness.injection

    def add(sequence: int, message: int, hook: str, text: str) -> None:
        context = ReceivedContext(sequence, message, injection.hook_channel(hook), hook, text.strip())
        seen.setdefault((message, hook, context.text), context)

    for sequence, message, text in _usermessage_blocks(conversation):
        block = injection.hook_block(text)
        if block is not None:
            add(sequence, message, block.hook, block.text)
    for result in tool_results(conversation):
        for reminder in result.reminders:
            block = injection.hook_block(reminder)
            if block is not None and injection.tool_hook(block.hook, result.tool):
                add(result.sequence, result.message, block.hook, block.text)
    for placed in placed_hooks(conversation):
        add(placed.sequence, placed.message, placed.block.hook, placed.block.text)
    return tuple(sorted(seen.values(), key=lambda c: (c.sequence, c.message)))


def static_contexts(conversation: Conversation, files: Collection[str] | None) -> tuple[ReceivedContext, ...]:
    """The contents of each of ``files`` (None: of every file) the harness loaded into the conversation, once per
    message and file."""
    seen: dict[tuple[int, str, str], ReceivedContext] = {}
    for sequence, message, text in _usermessage_blocks(conversation) if files is None or files else ():
        for loaded in conversation.harness.injection.loaded_files(text):
            if files is None or loaded.path in files:
                content = loaded.text.strip()
                context = ReceivedContext(sequence, message, Channel.STATIC_CONTEXT, loaded.path, content)
                seen.setdefault((message, loaded.path, content), context)
    return tuple(seen.values())


def user_prompts(conversation: Conversation) -> tuple[tuple[int, str], ...]:
    """The user's own text blocks (the prompts) with their message's index, once per message: every user text that
    is not a reminder."""
    seen: dict[tuple[int, str], str] = {}
    for _, message, text in _usermessage_blocks(conversation):
        if not conversation.harness.injection.is_harness_text(text):
            seen.setdefault((message, text), text)
    return tuple(seen)


def user_texts(conversation: Conversation) -> tuple[str, ...]:
    """The user's own text blocks (the prompts), once per message."""
    return tuple(text for _, text in user_prompts(conversation))


def _request_texts(request: Request) -> list[str]:
    """Every non-assistant text of one request: its system prompt, its user messages' texts and tool results."""
    texts = ["\n".join(request.system)] if request.system else []
    for message in request.messages:
        if message.role is Role.USER:
            for part in message.parts:
                texts += (
                    [part.text]
                    if isinstance(part, TextPart)
                    else [result_text(part)]
                    if isinstance(part, ToolResultPart)
                    else []
                )
    return texts


def received_texts(conversation: Conversation) -> tuple[str, ...]:
    """Every non-assistant text a model of the arm was sent by the harness: the conversation's system prompts, its
    history's user texts (the harness's placed instructions included) and tool results, and everything its
    sub-agents were sent."""
    texts: list[str] = []
    for exchange in conversation.members:
        system = conversation.request(exchange).system
        texts += ["\n".join(system)] if system else []
    texts += [
        part.text
        for held in conversation.history
        if held.message.role is Role.USER
        for part in held.message.parts
        if isinstance(part, TextPart)
    ]
    texts += [result.output + "".join(result.reminders) for result in tool_results(conversation)]
    for exchange in conversation.side:
        texts += _request_texts(conversation.request(exchange))
    return tuple(texts)


def tool_input_text(value: Any) -> str:
    """A tool call's input as one text (for looking a phrase or a path up in it)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
