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

from ..gateway.exchange import ExchangeRecord
from ..harness.transcript import Channel
from .chain import Conversation, message_blocks, message_texts, request_messages
from .repeats import content_text, same_call

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
        if held.message.get("role") == "assistant":
            continue
        for block in message_blocks(held.message):
            if block.get("type") == "tool_result":
                call = str(block.get("tool_use_id"))
                output, reminders = conversation.harness.injection.split_tool_output(content_text(block.get("content")))
                error = block.get("is_error") is True
                found.append(
                    GatewayToolResult(held.sequence, held.index, call, names.get(call, ""), output, reminders, error)
                )
    return tuple(found)


def tool_calls(conversation: Conversation) -> tuple[GatewayToolCall, ...]:
    """Every tool call the model's answers in the conversation made, in order, with its input as the model gave it
    and as the harness ran it (as a later request repeated it when one did: with its tools' defaults filled in, as
    the session file records it; :mod:`.repeats`)."""
    repeated: dict[str, dict[str, Any]] = {}
    for exchange in conversation.members:
        for message in request_messages(exchange):
            if isinstance(message, dict) and message.get("role") == "assistant":
                repeated.update({str(b.get("id")): b for b in message_blocks(message) if b.get("type") == "tool_use"})
    calls: list[GatewayToolCall] = []
    for held in conversation.history:
        if held.message.get("role") != "assistant":
            continue
        for block in message_blocks(held.message):
            if block.get("type") == "tool_use":
                call, name = str(block.get("id")), str(block.get("name"))
                again = repeated.get(call)
                ran = (
                    again.get("input")
                    if again is not None and same_call(block, again, conversation.cwd, conversation.harness)
                    else conversation.harness.ran_input(name, block.get("input"), conversation.cwd)
                )
                calls.append(GatewayToolCall(held.sequence, held.index, call, name, block.get("input"), ran))
    return tuple(calls)


def _usermessage_blocks(conversation: Conversation) -> Iterator[tuple[int, int, str]]:
    """(sequence, message index, text) of every user-message text block outside tool results."""
    for held in conversation.history:
        if held.message.get("role") == "user":
            for text in message_texts(held.message):
                yield held.sequence, held.index, text


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


def _request_texts(exchange: ExchangeRecord) -> list[str]:
    """Every non-assistant text of one request: its system prompt, its user messages' text and tool results."""
    body = exchange.request_body
    system = body.get("system") if isinstance(body, dict) else None
    texts = [system] if isinstance(system, str) else [content_text(system)] if system else []
    for message in request_messages(exchange):
        if isinstance(message, dict) and message.get("role") != "assistant":
            texts += [
                content_text(b.get("content")) if b.get("type") == "tool_result" else str(b.get("text", ""))
                for b in message_blocks(message)
            ]
    return texts


def received_texts(conversation: Conversation) -> tuple[str, ...]:
    """Every non-assistant text a model of the arm was sent by the harness: the conversation's system prompts, its
    history's user text blocks and tool results, and everything its sub-agents were sent."""
    texts: list[str] = []
    for exchange in conversation.members:
        body = exchange.request_body
        system = body.get("system") if isinstance(body, dict) else None
        texts += [system] if isinstance(system, str) else [content_text(system)] if system else []
    texts += [text for _, _, text in _usermessage_blocks(conversation)]
    texts += [result.output + "".join(result.reminders) for result in tool_results(conversation)]
    for exchange in conversation.side:
        texts += _request_texts(exchange)
    return tuple(texts)


def tool_input_text(value: Any) -> str:
    """A tool call's input as one text (for looking a phrase or a path up in it)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
