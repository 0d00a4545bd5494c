"""What the gateway log says reached the model: the source delivery is read from, since the agent cannot write it.

Only the harness's own conversation is read (:mod:`.chain`), and injected context only where the harness places
it, in its own format ``<system-reminder>\\n<hookName> hook additional context: <text>\\n</system-reminder>`` (or
``hook success: <text>`` for the plain standard output of a prompt-time or session-start hook):

- as a whole user-message text block, outside any tool result (prompt-time and session-start context; CLI 2.1.197
  placed a PostToolUse hook's block there too), which no tool of the agent can produce;
- at the end of a tool result, after the tool's own output, for a ``PostToolUse:<Tool>`` hook whose tool is the
  one that produced the result (CLI 2.1.332 appends it there, and on resume 2.1.197 merged it there). A block of
  any other hook inside a tool result, or one followed by more of the tool's output, is the tool's output: text
  the agent can print.

A file the harness loads by itself (the user-level ``CLAUDE.md``) is read where the CLI places it: in a reminder
that is a whole user-message text block (CLI 2.1.332: the first message's), as ``Contents of <path> (<what it
is>):``, a blank line and the file's text, up to the next such header or the end of the block. Like a prompt-time
hook's block, no tool of the agent can produce one there.

Assistant turns are never read as received: they are the model's own words. They are read to learn which tool a
``tool_use`` id names, so that a tool result can be attributed to the memory system's declared MCP tools (the
memory-tool channel) or to a call naming the memory's state (the state-read channel).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

from .chain import Conversation, message_blocks, message_texts, request_messages
from .claude_code import hook_channel
from .transcript import Channel

__all__ = [
    "GatewayToolCall",
    "GatewayToolResult",
    "ReceivedContext",
    "hook_contexts",
    "received_texts",
    "split_reminders",
    "static_contexts",
    "tool_calls",
    "tool_input_text",
    "tool_results",
    "user_prompts",
    "user_texts",
]

_HOOK_BLOCK = re.compile(
    r"<system-reminder>\n(?P<hook>\S+) hook (?:additional context|success): (?P<text>.*)\n</system-reminder>\n?", re.S
)
# How the CLI names a file it loaded into its context: "Contents of /home/dev/.claude/CLAUDE.md (user's private
# global instructions for all projects):" and a blank line, at the start of a line.
_LOADED_FILE = re.compile(r"^Contents of (?P<path>/\S+) \([^\n]*\):\n\n", re.M)
_REMINDER_START = "\n\n<system-reminder>\n"
_REMINDER_END = "\n</system-reminder>"


@dataclass(frozen=True)
class ReceivedContext:
    sequence: int  # the exchange that first carried it
    message: int  # its message's index in the conversation
    channel: Channel
    hook: str  # the hook's name, or the tool's name for a tool result
    text: str


@dataclass(frozen=True)
class GatewayToolCall:
    sequence: int  # the exchange whose answer made the call
    id: str
    name: str
    input: Any


@dataclass(frozen=True)
class GatewayToolResult:
    sequence: int  # the exchange that first carried it
    message: int
    tool_use_id: str
    tool: str  # the name of the call it answers ("" when no call of that id is in the request)
    output: str  # the tool's own output, without the reminders the harness appended
    reminders: tuple[str, ...]  # the harness's blocks after the output, in order
    is_error: bool


def split_reminders(text: str) -> tuple[str, tuple[str, ...]]:
    """A tool result's text as the tool's output and the reminder blocks appended after it (read from the end)."""
    blocks: list[str] = []
    rest = text.rstrip("\n")
    while rest.endswith(_REMINDER_END):
        start = rest.rfind(_REMINDER_START)
        if start < 0:
            break
        blocks.insert(0, rest[start + 2 :])
        rest = rest[:start]
    return rest, tuple(blocks)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "\n".join(b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str))


def _names(messages: list[Any]) -> dict[str, str]:
    return {
        str(b.get("id")): str(b.get("name"))
        for m in messages
        if isinstance(m, dict) and m.get("role") == "assistant"
        for b in message_blocks(m)
        if b.get("type") == "tool_use"
    }


def tool_results(conversation: Conversation) -> tuple[GatewayToolResult, ...]:
    """Every distinct tool result of the conversation (by tool_use id), as first carried."""
    seen: dict[str, GatewayToolResult] = {}
    for exchange in conversation.members:
        messages = request_messages(exchange)
        names = _names(messages)
        for index, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") == "assistant":
                continue
            for block in message_blocks(message):
                call = str(block.get("tool_use_id"))
                if block.get("type") != "tool_result" or call in seen:
                    continue
                output, reminders = split_reminders(_content_text(block.get("content")))
                error = block.get("is_error") is True
                seen[call] = GatewayToolResult(
                    exchange.sequence, index, call, names.get(call, ""), output, reminders, error
                )
    return tuple(seen.values())


def tool_calls(conversation: Conversation) -> tuple[GatewayToolCall, ...]:
    """Every tool call the model's answers in the conversation made, in order, as the harness repeated it when it
    did (with its tools' defaults filled in, as the session file records it; :func:`.chain.repeats_answer`)."""
    repeated: dict[str, Any] = {}
    for exchange in conversation.members:
        for message in request_messages(exchange):
            if isinstance(message, dict) and message.get("role") == "assistant":
                repeated.update(
                    {str(b.get("id")): b.get("input") for b in message_blocks(message) if b.get("type") == "tool_use"}
                )
    calls: list[GatewayToolCall] = []
    for exchange in conversation.members:
        body = exchange.response_body
        content = body.get("content") if isinstance(body, dict) and body.get("type") == "message" else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                call = str(block.get("id"))
                given = repeated.get(call, block.get("input"))
                calls.append(GatewayToolCall(exchange.sequence, call, str(block.get("name")), given))
    return tuple(calls)


def _usermessage_blocks(conversation: Conversation) -> Iterator[tuple[int, int, str]]:
    """(sequence, message index, text) of every user-message text block outside tool results."""
    for exchange in conversation.members:
        for index, message in enumerate(request_messages(exchange)):
            if isinstance(message, dict) and message.get("role") == "user":
                for text in message_texts(message):
                    yield exchange.sequence, index, text


def hook_contexts(conversation: Conversation) -> tuple[ReceivedContext, ...]:
    """Every hook context the harness placed, once per place (message and hook), in the order first carried."""
    seen: dict[tuple[int, str, str], ReceivedContext] = {}

    def add(sequence: int, message: int, hook: str, text: str) -> None:
        context = ReceivedContext(sequence, message, hook_channel(hook), hook, text.strip())
        seen.setdefault((message, hook, context.text), context)

    for sequence, message, text in _usermessage_blocks(conversation):
        block = _HOOK_BLOCK.fullmatch(text)
        if block is not None:
            add(sequence, message, block["hook"], block["text"])
    for result in tool_results(conversation):
        for reminder in result.reminders:
            block = _HOOK_BLOCK.fullmatch(reminder)
            if block is not None and block["hook"] == f"PostToolUse:{result.tool}":
                add(result.sequence, result.message, block["hook"], block["text"])
    return tuple(sorted(seen.values(), key=lambda c: (c.sequence, c.message)))


def static_contexts(conversation: Conversation, files: Collection[str]) -> tuple[ReceivedContext, ...]:
    """The contents of each of ``files`` the harness loaded into the conversation, once per message and file."""
    seen: dict[tuple[int, str, str], ReceivedContext] = {}
    for sequence, message, text in _usermessage_blocks(conversation) if files else ():
        if not text.startswith("<system-reminder>"):
            continue
        body = text.rstrip("\n").removesuffix("</system-reminder>")
        for header in _LOADED_FILE.finditer(body):
            if header["path"] in files:
                end = _LOADED_FILE.search(body, header.end())
                content = body[header.end() : end.start() if end else len(body)].strip()
                context = ReceivedContext(sequence, message, Channel.STATIC_CONTEXT, header["path"], content)
                seen.setdefault((message, header["path"], content), context)
    return tuple(seen.values())


def user_prompts(conversation: Conversation) -> tuple[tuple[int, str], ...]:
    """The user's own text blocks (the prompts) with their message's index, once per message: every user text that
    is not a reminder."""
    seen: dict[tuple[int, str], str] = {}
    for _, message, text in _usermessage_blocks(conversation):
        if not text.startswith("<system-reminder>"):
            seen.setdefault((message, text), text)
    return tuple(seen)


def user_texts(conversation: Conversation) -> tuple[str, ...]:
    """The user's own text blocks (the prompts), once per message."""
    return tuple(text for _, text in user_prompts(conversation))


def received_texts(conversation: Conversation) -> tuple[str, ...]:
    """Every non-assistant text of the conversation: system prompt, user text blocks and tool results."""
    texts: list[str] = []
    for exchange in conversation.members:
        body = exchange.request_body
        system = body.get("system") if isinstance(body, dict) else None
        texts += [system] if isinstance(system, str) else [_content_text(system)] if system else []
    texts += [text for _, _, text in _usermessage_blocks(conversation)]
    texts += [result.output + "".join(result.reminders) for result in tool_results(conversation)]
    return tuple(texts)


def tool_input_text(value: Any) -> str:
    """A tool call's input as one text (for looking a phrase or a path up in it)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
