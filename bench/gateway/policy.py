"""Policies: a deterministic, offline stand-in for a model, read from a runner-owned, digest-pinned data file.

A policy answers each request from ordered rules over what the request shows the model. The first rule whose
conditions all hold wins; ``default`` answers when none does, so every request has exactly one answer. Because
the rules read only the request, two arms given the same policy can differ only through what their harness
delivered: that is the point of policy mode.

A policy reads and answers the neutral conversation (:mod:`.neutral`), so the same rule fires for the same
conversation in every API dialect; the dialect renders the answer, deriving its identifiers (message id, tool call
ids) from the request bytes, so the same request always gets the same reply.

A rule may also condition on the tools a request offers (``offers``): that is still reading the request. A tool is
offered when the request defines it in ``tools`` or lists it among the deferred tools its text announces (Claude
Code defers MCP tools: their names arrive as a list in a system reminder, their schemas only on demand).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, JsonValue

from ..contracts import ContractModel, Document, Sha256
from ..contracts.checked_files import read_bounded
from ..contracts.files import parse_contract
from ..errors import ContractError
from .errors import GatewayError, PolicyDigestMismatch
from .neutral import Conversation, NeutralReply, Part, ReplyPart, RequestView, TextPart, ToolCallPart

__all__ = ["PUBLIC_CONTRACTS", "Policy", "Rule", "TextReply", "ToolUseReply", "When", "load_policy", "offered_tools"]

# A deferred-tool announcement: a line naming deferred tools, then one tool name per line.
_DEFERRED = re.compile(r"deferred tools[^\n]*\n((?:[A-Za-z0-9_.:-]+\n?)+)")


class TextReply(ContractModel):
    type: Literal["text"] = "text"
    text: str


class ToolUseReply(ContractModel):
    """A tool call, e.g. ``{"type": "tool_use", "name": "Read", "input": {"file_path": "/w/a.py"}}``."""

    type: Literal["tool_use"] = "tool_use"
    name: str = Field(min_length=1)
    input: dict[str, JsonValue]


Reply = Annotated[TextReply | ToolUseReply, Field(discriminator="type")]


class When(ContractModel):
    """Conditions on a request; all given ones must hold. No condition at all matches every request."""

    contains: tuple[str, ...] = Field(default=(), description="every phrase appears in `part`")
    lacks: tuple[str, ...] = Field(default=(), description="no phrase appears in `part`")
    part: Part = Field(
        default=Part.ANY,
        description="where `contains` and `lacks` look: any (system, user text, tool results), system, user (text "
        "of user messages), tool-results, latest (the last user message); the model's own turns never count",
    )
    turn: int | None = Field(
        default=None, ge=1, description="the request's turn: 1 + the assistant messages already in it"
    )
    tool_result_seen: bool | None = Field(default=None, description="whether any tool result is in the request")
    offers: tuple[str, ...] = Field(
        default=(), description="every named tool is offered (defined in `tools`, or announced as deferred)"
    )

    def holds(self, view: RequestView, offered: frozenset[str] = frozenset()) -> bool:
        return not self.misses(view, offered)

    def misses(self, view: RequestView, offered: frozenset[str] = frozenset()) -> tuple[str, ...]:
        """Why the conditions do not hold for ``view``: one reason per failed condition (none: they hold)."""
        texts = view.texts(self.part)
        reasons = [f"offers {name}: not offered" for name in self.offers if not _offered(name, offered)]
        part = self.part.value
        reasons += [f"contains {p!r}: not in {part}" for p in self.contains if not any(p in t for t in texts)]
        reasons += [f"lacks {p!r}: found in {part}" for p in self.lacks if any(p in t for t in texts)]
        if self.turn is not None and view.assistant_turns + 1 != self.turn:
            reasons.append(f"turn {self.turn}: the request is turn {view.assistant_turns + 1}")
        if self.tool_result_seen is not None and view.has_tool_result != self.tool_result_seen:
            reasons.append(f"tool_result_seen {str(self.tool_result_seen).lower()}: it is not")
        return tuple(reasons)


class Rule(ContractModel):
    name: str = Field(min_length=1)
    when: When
    reply: tuple[Reply, ...] = Field(min_length=1)


class Policy(Document):
    """A policy file: ordered rules, the first whose ``when`` holds answers; ``default`` when none does."""

    model_config = {**Document.model_config, "title": "ModelPolicy"}  # its public name, as its kind says
    kind: Literal["model-policy"] = "model-policy"
    schema_version: Literal[1] = 1
    rules: tuple[Rule, ...]
    default: tuple[Reply, ...] = Field(min_length=1)

    def choose(
        self, view: RequestView, offered: frozenset[str] = frozenset()
    ) -> tuple[str, tuple[TextReply | ToolUseReply, ...]]:
        """The name of the rule that answers (``default`` when none matches) and its reply."""
        for rule in self.rules:
            if rule.when.holds(view, offered):
                return rule.name, rule.reply
        return "default", self.default

    def reply(
        self, conversation: Conversation, seed: str, offering: Callable[[Conversation], frozenset[str]] | None = None
    ) -> tuple[str, NeutralReply]:
        """The name of the rule that answers ``conversation`` and its reply, identifiers to derive from ``seed``;
        ``offering`` (the harness's) adds the tools its client offers in its own terms."""
        offered = offered_tools(conversation) | (offering(conversation) if offering is not None else frozenset())
        rule, reply = self.choose(RequestView.of(conversation), offered)
        parts: list[ReplyPart] = []
        for index, block in enumerate(reply):
            if isinstance(block, ToolUseReply):
                parts.append(ToolCallPart(id=f"{seed[:16]}{index:02d}", name=block.name, arguments=block.input))
            else:
                parts.append(TextPart(text=block.text))
        return rule, NeutralReply(parts=tuple(parts), seed=seed)


PUBLIC_CONTRACTS = (Policy,)


def _offered(name: str, offered: frozenset[str]) -> bool:
    """``name`` is offered, itself or through its namespace (``mcp__<server>`` offers ``mcp__<server>__<tool>``)."""
    return name in offered or any(name.startswith(f"{space}__") for space in offered)


def offered_tools(conversation: Conversation) -> frozenset[str]:
    """The tools a request offers the model: those it defines and those its text announces as deferred."""
    names = set(conversation.tools)
    view = RequestView.of(conversation)
    for text in view.texts(Part.ANY):
        for listing in _DEFERRED.findall(text):
            names.update(line for line in listing.splitlines() if line)
    return frozenset(names)


def load_policy(path: Path, sha256: Sha256) -> Policy:
    """Read a pinned policy; refuse it when its bytes are not the pinned ones or it breaks the contract."""
    data = read_bounded(path, "policy", error=GatewayError, hint="the gateway config names it")
    actual = Sha256.of(data)
    if actual != sha256:
        raise PolicyDigestMismatch(path, sha256, actual)
    try:
        return parse_contract(data, Policy, f"policy {path}")
    except ContractError as exc:
        raise GatewayError(exc.message, path=str(path), field=exc.field) from None
