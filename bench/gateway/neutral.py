"""The neutral conversation: what a request shows the model, whichever API dialect carried it.

A dialect (:mod:`.dialects`) parses a request body into a :class:`Conversation`; the policy engine reads its
:class:`RequestView`, and a policy's answer is a :class:`NeutralReply` the dialect renders back onto its wire. Texts
are kept as sent: recognizing injected context in them (reminders, instruction files, hook output) is the
harness's business, not the gateway's.

The mapping rules every dialect follows, so one policy fires the same rule in each:

- the system prompt is ``system`` (Anthropic's ``system``; the developer messages a Responses request opens with);
- one :class:`Message` per turn side: everything the model produced between two requests of the client is one
  assistant message (so the request's turn is 1 + its assistant messages), and everything sent back between two
  assistant messages (user text, tool results, later context) is one user message.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Literal, Protocol

from pydantic import Field, JsonValue

from ..contracts import ContractModel, canonical_json

__all__ = [
    "Conversation",
    "HarnessHooks",
    "Message",
    "NeutralReply",
    "Part",
    "ReplyPart",
    "RequestKind",
    "RequestView",
    "Role",
    "TextPart",
    "ToolCallPart",
    "ToolResultPart",
    "reply_seed",
]


class Role(StrEnum):
    USER = "user"  # everything the client sends between two model turns
    ASSISTANT = "assistant"  # the model's own turns


class TextPart(ContractModel):
    type: Literal["text"] = "text"
    text: str
    # The client's own instruction placed among the turns (a Responses developer or system message after the opening
    # ones): no user, tool or model writes one, so its role tells it from the user's words (hook context under Codex)
    instruction: bool = False


class ToolCallPart(ContractModel):
    """A tool call; ``namespace`` groups tools as the client declared them (Codex: ``mcp__<server>``)."""

    type: Literal["tool-call"] = "tool-call"
    id: str
    name: str  # as sent; a policy's replies are checked non-empty where the policy is read
    namespace: str | None = None
    arguments: JsonValue  # the parsed arguments; text that was not JSON stays text

    @property
    def qualified_name(self) -> str:
        """The tool's name as one string: ``<namespace>__<name>``, the MCP naming both dialects' clients share."""
        return self.name if self.namespace is None else f"{self.namespace}__{self.name}"


class ToolResultPart(ContractModel):
    type: Literal["tool-result"] = "tool-result"
    id: str  # the call it answers
    content: tuple[str, ...]  # its texts; images and files carry none
    is_error: bool = False  # the client marked the result an error (Anthropic's ``is_error``)


ContentPart = Annotated[TextPart | ToolCallPart | ToolResultPart, Field(discriminator="type")]
ReplyPart = Annotated[TextPart | ToolCallPart, Field(discriminator="type")]


class Message(ContractModel):
    role: Role
    parts: tuple[ContentPart, ...]


class Conversation(ContractModel):
    """One request's conversation: its system texts, its messages in order, and the tools it defines."""

    system: tuple[str, ...]
    messages: tuple[Message, ...]
    tools: frozenset[str]  # qualified names of the tools the request defines


class NeutralReply(ContractModel):
    """A policy's answer before a dialect renders it: its parts, and ``seed`` (hex) that every identifier the
    dialect writes is derived from, so the same request always gets the same bytes back."""

    parts: tuple[ReplyPart, ...] = Field(min_length=1)
    seed: str = Field(pattern=r"^[0-9a-f]{64}$")

    @property
    def calls_tools(self) -> bool:
        return any(isinstance(part, ToolCallPart) for part in self.parts)


class RequestKind(StrEnum):
    """What a request to the model is for, as its client marks it."""

    TURN = "turn"  # a turn of the agent's own work
    COMPACTION = "compaction"  # the client compacting its context on the agent's behalf: billed, not agent work


class HarnessHooks(Protocol):
    """What the gateway asks the arm's harness about its client; each harness implements it (``bench.harness``).
    Without hooks, replies keep the policy's tool names and no request is given a kind."""

    def name_calls(self, reply: NeutralReply, conversation: Conversation) -> NeutralReply:
        """``reply`` with its tool calls as the harness's client runs them (the policy's ``Read`` may be a shell
        command there); applied to every policy reply before the dialect renders it."""

    def offered_tools(self, conversation: Conversation) -> frozenset[str]:
        """The policy's tool names the harness's client offers in ``conversation`` beyond those it defines or
        announces by the policy's names (Codex: its shell carries ``Read`` and ``Bash``; an announced namespace
        ``mcp__<server>`` offers every tool of that server); read with them before a rule's ``offers``."""

    def request_kind(self, headers: Mapping[str, str], body: dict[str, Any]) -> RequestKind:
        """What a request (its headers, lower-case, and its parsed body) is for; recorded with its exchange."""


def reply_seed(body: object) -> str:
    """The seed of a reply to request ``body``: SHA-256 of its canonical JSON."""
    return hashlib.sha256(canonical_json(body)).hexdigest()


class Part(StrEnum):
    """Which part of a request a phrase is looked for in. Assistant turns never count: they are the model's own."""

    ANY = "any"  # system, user text and tool results
    SYSTEM = "system"
    USER = "user"  # text parts of user messages
    TOOL_RESULTS = "tool-results"
    LATEST = "latest"  # everything in the last user message (the newest thing the model is shown)


@dataclass(frozen=True)
class RequestView:
    """The texts a conversation shows the model, by part."""

    system: tuple[str, ...]
    user: tuple[str, ...]
    tool_results: tuple[str, ...]
    latest: tuple[str, ...]
    assistant_turns: int

    @classmethod
    def of(cls, conversation: Conversation) -> RequestView:
        user: list[str] = []
        results: list[str] = []
        latest: list[str] = []
        turns = 0
        for message in conversation.messages:
            if message.role is Role.ASSISTANT:
                turns += 1
                continue
            latest = []
            for part in message.parts:
                if isinstance(part, ToolResultPart):
                    results.extend(part.content)
                    latest.extend(part.content)
                elif isinstance(part, TextPart):
                    user.append(part.text)
                    latest.append(part.text)
        return cls(conversation.system, tuple(user), tuple(results), tuple(latest), turns)

    def texts(self, part: Part) -> tuple[str, ...]:
        if part is Part.ANY:
            return self.system + self.user + self.tool_results
        if part is Part.SYSTEM:
            return self.system
        if part is Part.USER:
            return self.user
        if part is Part.TOOL_RESULTS:
            return self.tool_results
        return self.latest

    @property
    def has_tool_result(self) -> bool:
        return bool(self.tool_results)
