"""How the harness repeats what was said: the changes an honest run shows between two copies of one message.

The harness sends every earlier message again in each request, and at a resume rebuilds them from its session
file. What changes on the way is known and narrow (measured on Claude Code 2.1.197):

- ``cache_control`` markers move from turn to turn (they say where to cache, not what the model is shown);
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
from typing import Any

from ..gateway.conversation import without_cache_control
from ..harness import Harness

__all__ = ["content_text", "repeats_answer", "same_call", "same_message"]


def same_call(given: dict[str, Any], repeated: dict[str, Any], cwd: str, harness: Harness) -> bool:
    """A tool call the model gave and the harness repeated: same id, name and values, defaults added only."""
    if any(given.get(key) != repeated.get(key) for key in ("type", "id", "name")):
        return False
    mine, theirs = harness.ran_input(str(given.get("name")), given.get("input"), cwd), repeated.get("input")
    if not isinstance(mine, dict) or not isinstance(theirs, dict):
        return bool(mine == theirs)
    added = [theirs[key] for key in theirs.keys() - mine.keys()]
    return all(theirs.get(key) == value for key, value in mine.items()) and not any(
        isinstance(value, (str, list, dict)) for value in added
    )


def repeats_answer(content: Any, repeated: Any, cwd: str, harness: Harness) -> bool:
    """Whether ``repeated`` (a request's message) is the assistant ``content`` (a model's answer) as repeated."""
    if not isinstance(content, list) or not isinstance(repeated, dict) or repeated.get("role") != "assistant":
        return False
    theirs = without_cache_control(repeated.get("content"))
    if not isinstance(theirs, list) or len(theirs) != len(content):
        return False
    return all(
        same_call(mine, other, cwd, harness)
        if isinstance(mine, dict) and mine.get("type") == "tool_use" and isinstance(other, dict)
        else without_cache_control(mine) == other
        for mine, other in zip(content, theirs, strict=True)
    )


def content_text(content: Any) -> str:
    """The text of a tool result's content: a string, or its text blocks joined by newlines."""
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "\n".join(b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str))


def _canonical_user(message: Any, harness: Harness) -> tuple[list[tuple[str, str, bool]], list[str], list[Any]] | None:
    """A user message as (tool results: id, output, error), (text blocks and appended harness blocks), other
    blocks."""
    content = without_cache_control(message.get("content")) if isinstance(message, dict) else None
    if isinstance(content, str):
        return [], [content.strip()], []
    if not isinstance(content, list):
        return None
    results: list[tuple[str, str, bool]] = []
    texts: list[str] = []
    other: list[Any] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            output, reminders = harness.injection.split_tool_output(content_text(block.get("content")))
            results.append((str(block.get("tool_use_id")), output.rstrip(), block.get("is_error") is True))
            texts += [reminder.strip() for reminder in reminders]
        elif isinstance(block, dict) and block.get("type") == "text":
            texts.append(str(block.get("text")).strip())
        else:
            other.append(block)
    return results, texts, other


def same_message(first: Any, repeated: Any, cwd: str, harness: Harness) -> bool:
    """Whether ``repeated`` is ``first`` as the harness repeats it. ``first`` is a user message as first carried,
    or an assistant message holding the model's own answer (its content as the response gave it)."""
    if not isinstance(first, dict) or not isinstance(repeated, dict) or first.get("role") != repeated.get("role"):
        return False
    if first.get("role") == "assistant":
        return repeats_answer(without_cache_control(first.get("content")), repeated, cwd, harness)
    if without_cache_control(first) == without_cache_control(repeated):
        return True
    mine, theirs = _canonical_user(first, harness), _canonical_user(repeated, harness)
    if mine is None or theirs is None or (mine[0], mine[2]) != (theirs[0], theirs[2]):
        return False
    own = harness.injection.is_harness_text
    if [text for text in mine[1] if not own(text)] != [text for text in theirs[1] if not own(text)]:
        return False
    # The harness may drop its own blocks when it rebuilds a message, never add one.
    return not Counter(text for text in theirs[1] if own(text)) - Counter(mine[1])
