"""How the harness repeats what was said: the changes an honest run shows between two copies of one message.

The harness sends every earlier message again in each request, and at a resume rebuilds them from its session
file. Both copies are read in the gateway's neutral model (:mod:`bench.gateway.neutral`), so what no dialect shows
the model (``cache_control`` markers, which move from turn to turn; a Responses item's own id and status) never
differs. What changes on the way is known and narrow (measured on Claude Code 2.1.197; Codex CLI 0.169.0 resends
its items as they were):

- a tool call's input gains its tools' defaults (Edit: ``"replace_all": false``): keys whose values are not text;
- a call's input as the harness runs it (:meth:`~bench.harness.base.Harness.ran_input`: its own normalizations);
- at a resume, the harness's own blocks that followed a tool result as text blocks of the same message are merged
  into the result's content (its trailing whitespace trimmed, a blank line between), and some may be dropped (CLI
  2.1.332 on a host kept only a message's last hook block): a rebuilt message may lose the harness's blocks,
  never gain one, and its tool outputs and the user's own words stay as they were.

Anything else is a difference: a message repeated otherwise was rewritten on the way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..gateway.neutral import Message, Role, TextPart, ToolCallPart, ToolResultPart
from ..harness import Harness

__all__ = ["harness_written", "repeats_answer", "result_text", "same_call", "same_message"]


def harness_written(part: TextPart, harness: Harness) -> bool:
    """Whether a user-side text part is the harness's own: an instruction the client placed among the turns (no user
    or tool writes one), or a text in the harness's own format."""
    return part.instruction or harness.injection.is_harness_text(part.text)


def same_call(given: ToolCallPart, repeated: ToolCallPart, cwd: str, harness: Harness) -> bool:
    """A tool call the model gave and the harness repeated: same id, name and values, defaults added only."""
    if (given.id, given.qualified_name) != (repeated.id, repeated.qualified_name):
        return False
    mine, theirs = harness.ran_input(given.qualified_name, given.arguments, cwd), repeated.arguments
    if not isinstance(mine, dict) or not isinstance(theirs, dict):
        return bool(mine == theirs)
    added = [theirs[key] for key in theirs.keys() - mine.keys()]
    return all(theirs.get(key) == value for key, value in mine.items()) and not any(
        isinstance(value, (str, list, dict)) for value in added
    )


def repeats_answer(content: Sequence[Any], repeated: Message, cwd: str, harness: Harness) -> bool:
    """Whether ``repeated`` (a request's message) is the assistant ``content`` (a model's answer's parts) as
    repeated."""
    if repeated.role is not Role.ASSISTANT or len(repeated.parts) != len(content):
        return False
    return all(
        same_call(mine, other, cwd, harness)
        if isinstance(mine, ToolCallPart) and isinstance(other, ToolCallPart)
        else mine == other
        for mine, other in zip(content, repeated.parts, strict=True)
    )


def result_text(result: ToolResultPart) -> str:
    """The text of a tool result: its texts joined by newlines."""
    return "\n".join(result.content)


def _canonical_user(message: Message, harness: Harness) -> tuple[list[tuple[str, str, bool]], list[tuple[str, bool]]]:
    """A user message as (tool results: id, output, error) and (its texts and the harness blocks appended to a
    result's output, each with whether it is the harness's own)."""
    results: list[tuple[str, str, bool]] = []
    texts: list[tuple[str, bool]] = []
    own = harness.injection.is_harness_text
    for part in message.parts:
        if isinstance(part, ToolResultPart):
            output, reminders = harness.injection.split_tool_output(result_text(part))
            results.append((part.id, output.rstrip(), part.is_error))
            texts += [(reminder.strip(), own(reminder.strip())) for reminder in reminders]
        elif isinstance(part, TextPart):
            text = part.text.strip()
            texts.append((text, part.instruction or own(text)))
    return results, texts


def same_message(first: Message, repeated: Message, cwd: str, harness: Harness) -> bool:
    """Whether ``repeated`` is ``first`` as the harness repeats it. ``first`` is a user message as first carried,
    or an assistant message holding the model's own answer (its parts as the response gave them)."""
    if first.role is not repeated.role:
        return False
    if first.role is Role.ASSISTANT:
        return repeats_answer(first.parts, repeated, cwd, harness)
    if first == repeated:
        return True
    mine, theirs = _canonical_user(first, harness), _canonical_user(repeated, harness)
    if mine[0] != theirs[0]:
        return False
    if [text for text, own in mine[1] if not own] != [text for text, own in theirs[1] if not own]:
        return False
    # The harness may drop its own blocks when it rebuilds a message, never add one.
    return not Counter(text for text, own in theirs[1] if own) - Counter(text for text, _ in mine[1])
