"""Trying a policy without a run: which rule answers each request, why every rule before it did not, and whether
each tool call it would make fits the offered tool's own ``input_schema``.

The requests are read in the dialect they were sent in (``dialect``: Claude Code's Messages API unless told). They
are a recorded arm's (the gateway's exchange log: what the harness really sent, tools and all) or one
dry request holding the challenge's prompt alone, which offers no tool.
"""

from __future__ import annotations

from typing import Any

from ..contracts import ApiDialect, ContractModel
from .dialects import Dialect, dialect_of
from .neutral import RequestView
from .policy import Policy, ToolUseReply, offered_tools
from .tool_schema import argument_errors, unread_keywords

_MESSAGES = dialect_of(ApiDialect.ANTHROPIC_MESSAGES)  # what Claude Code speaks: recorded runs so far

__all__ = ["RuleMiss", "ToolCallCheck", "TurnCheck", "check_request", "dry_request"]


class RuleMiss(ContractModel):
    rule: str
    reasons: tuple[str, ...]


class ToolCallCheck(ContractModel):
    """One tool call of the answering rule. ``errors`` empty and ``checked`` true: its arguments fit the schema."""

    tool: str
    checked: bool  # false: the request does not define the tool's schema (not offered, or deferred)
    errors: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()  # schema keywords the check does not read


class TurnCheck(ContractModel):
    request: int  # 0-based position in the arm's exchange log
    turn: int
    fired: str
    recorded: str | None = None  # the rule the gateway recorded (None: a dry request)
    missed: tuple[RuleMiss, ...]  # every rule before the one that fired, with why it did not
    calls: tuple[ToolCallCheck, ...] = ()

    @property
    def refused(self) -> bool:
        return any(call.errors for call in self.calls)


def dry_request(prompt: str) -> dict[str, Any]:
    """A first request holding ``prompt`` alone: no system text, no tools."""
    return {"messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}]}


def check_request(
    policy: Policy,
    body: dict[str, Any],
    request: int = 0,
    recorded: str | None = None,
    dialect: Dialect = _MESSAGES,
) -> TurnCheck:
    conversation = dialect.parse(body)
    view, offered = RequestView.of(conversation), offered_tools(conversation)
    fired, reply = policy.choose(view, offered)
    missed = []
    for rule in policy.rules:
        if rule.name == fired:
            break
        missed.append(RuleMiss(rule=rule.name, reasons=rule.when.misses(view, offered)))
    schemas, calls = dialect.tool_schemas(body), []
    for block in reply:
        if isinstance(block, ToolUseReply):
            schema = schemas.get(block.name)
            if schema is None:
                calls.append(ToolCallCheck(tool=block.name, checked=False))
            else:
                errors = tuple(argument_errors(schema, block.input))
                unread = tuple(sorted(unread_keywords(schema)))
                calls.append(ToolCallCheck(tool=block.name, checked=True, errors=errors, unchecked=unread))
    turn = view.assistant_turns + 1
    return TurnCheck(
        request=request, turn=turn, fired=fired, recorded=recorded, missed=tuple(missed), calls=tuple(calls)
    )
