"""A Responses API request's ``input`` items and ``tools``, read into the neutral conversation.

The developer (or system) messages that open ``input`` are the system prompt, after ``instructions`` if the
request has one. After them, the model's own items (an assistant message, reasoning, tool calls) make one
assistant message per run, and everything the client sends between two of those runs (user and later developer
messages, tool outputs) one user message. Every item is checked for the fields read from it; one that is not an
object, has an unknown type or role, or a field of the wrong type is refused, naming where.
"""

from __future__ import annotations

import json
from typing import Any

from ..neutral import Message, Role, TextPart, ToolCallPart, ToolResultPart
from .base import UnreadableRequest

__all__ = ["parse_input", "parse_output", "tool_names"]

ContentParts = list[TextPart | ToolCallPart | ToolResultPart]

_CALLS = frozenset({"function_call", "custom_tool_call", "tool_search_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
# The model's items that show nothing a policy reads: kept out of the view, still an assistant turn.
_OPAQUE = frozenset({"reasoning", "web_search_call", "image_generation_call", "file_search_call"})
_CLIENT_ROLES = frozenset({"user", "developer", "system"})
_PREAMBLE_ROLES = frozenset({"developer", "system"})


def _field(item: dict[str, Any], name: str, where: str, kinds: tuple[type, ...] = (str,)) -> Any:
    value = item.get(name)
    if not isinstance(value, kinds):
        wanted = " or ".join(k.__name__ for k in kinds)
        raise UnreadableRequest(f"{where}.{name}: expected {wanted}, got {type(value).__name__}")
    return value


def _texts(content: Any, where: str) -> tuple[str, ...]:
    """The texts of a message content or a tool output: a string, or a list of parts (those with ``text``)."""
    if isinstance(content, str):
        return (content,)
    if not isinstance(content, list):
        raise UnreadableRequest(f"{where}: expected a string or a list of parts, got {type(content).__name__}")
    texts = []
    for index, part in enumerate(content):
        if not isinstance(part, dict):
            raise UnreadableRequest(f"{where}[{index}]: a content part must be an object, got {type(part).__name__}")
        if "text" in part:
            texts.append(_field(part, "text", f"{where}[{index}]"))
    return tuple(texts)


def _arguments(text: str) -> Any:
    """A function call's arguments: the JSON they encode, or the text itself when it is not JSON."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def tool_names(tools: Any, where: str) -> frozenset[str]:
    """Qualified names of the tools a ``tools`` list defines: named tools by name, a namespace's tools as
    ``<namespace>__<name>``, hosted tools (``web_search``, ``tool_search``) by their type."""
    if tools is None:
        return frozenset()
    if not isinstance(tools, list):
        raise UnreadableRequest(f"{where}: expected a list of tools, got {type(tools).__name__}")
    names: set[str] = set()
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise UnreadableRequest(f"{where}[{index}]: a tool must be an object, got {type(tool).__name__}")
        kind = _field(tool, "type", f"{where}[{index}]")
        if kind == "namespace":
            space = _field(tool, "name", f"{where}[{index}]")
            names.update(f"{space}__{name}" for name in tool_names(tool.get("tools"), f"{where}[{index}].tools"))
        else:
            names.add(_field(tool, "name", f"{where}[{index}]") if kind in ("function", "custom") else kind)
    return frozenset(names)


def _call(item: dict[str, Any], kind: str, where: str) -> ToolCallPart:
    call_id = _field(item, "call_id", where)
    if kind == "tool_search_call":
        return ToolCallPart.model_construct(id=call_id, name="tool_search", arguments=item.get("arguments"))
    name = _field(item, "name", where)
    if kind == "custom_tool_call":
        return ToolCallPart.model_construct(id=call_id, name=name, arguments=_field(item, "input", where))
    namespace = item.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        raise UnreadableRequest(f"{where}.namespace: expected str, got {type(namespace).__name__}")
    arguments = _arguments(_field(item, "arguments", where))
    # parsed JSON already: not re-validated at any depth
    return ToolCallPart.model_construct(id=call_id, name=name, namespace=namespace, arguments=arguments)


def _output(item: dict[str, Any], kind: str, where: str) -> tuple[ToolResultPart, frozenset[str]]:
    call_id = _field(item, "call_id", where)
    if kind == "tool_search_output":
        found = tool_names(item.get("tools"), f"{where}.tools")
        return ToolResultPart(id=call_id, content=tuple(sorted(found))), found
    return ToolResultPart(id=call_id, content=_texts(item.get("output"), f"{where}.output")), frozenset()


def _side(item: dict[str, Any], where: str) -> tuple[Role, ContentParts, frozenset[str]]:
    """Which side of the conversation an item is on, the parts it shows, and the tools it brings in."""
    kind = item.get("type", "message")  # an item without a type is a message (the API's easy input form)
    if not isinstance(kind, str):
        raise UnreadableRequest(f"{where}.type: expected str, got {type(kind).__name__}")
    if kind == "message":
        role = _field(item, "role", where)
        if role != "assistant" and role not in _CLIENT_ROLES:
            raise UnreadableRequest(f"{where}.role: {role!r} is not a message role of the Responses API")
        placed = role in _PREAMBLE_ROLES  # after the opening ones: the client's instruction, not the user's words
        texts = [TextPart(text=text, instruction=placed) for text in _texts(item.get("content"), f"{where}.content")]
        return (Role.ASSISTANT if role == "assistant" else Role.USER), list(texts), frozenset()
    if kind in _CALLS:
        return Role.ASSISTANT, [_call(item, kind, where)], frozenset()
    if kind in _OUTPUTS:
        result, found = _output(item, kind, where)
        return Role.USER, [result], found
    if kind in _OPAQUE:
        return Role.ASSISTANT, [], frozenset()
    raise UnreadableRequest(f"{where}.type: {kind!r} is not an input item this gateway reads")


def _items(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    if value is None:
        return []
    if not isinstance(value, list):
        raise UnreadableRequest(f"input: expected a string or a list of items, got {type(value).__name__}")
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise UnreadableRequest(f"input[{index}]: an item must be an object, got {type(item).__name__}")
    return value


def parse_input(instructions: Any, value: Any) -> tuple[tuple[str, ...], tuple[Message, ...], frozenset[str]]:
    """The system texts, the messages, and the tools tool searches brought in, of ``instructions`` and ``input``."""
    if instructions is not None and not isinstance(instructions, str):
        raise UnreadableRequest(f"instructions: expected str, got {type(instructions).__name__}")
    system = [] if instructions is None else [instructions]
    items = _items(value)
    opening = 0
    while opening < len(items) and items[opening].get("type", "message") == "message":
        if not isinstance(role := items[opening].get("role"), str) or role not in _PREAMBLE_ROLES:
            break
        system.extend(_texts(items[opening].get("content"), f"input[{opening}].content"))
        opening += 1
    messages: list[tuple[Role, ContentParts]] = []
    found: set[str] = set()
    for index in range(opening, len(items)):
        role, parts, tools = _side(items[index], f"input[{index}]")
        found |= tools
        if messages and messages[-1][0] is role:
            messages[-1][1].extend(parts)
        else:
            messages.append((role, parts))
    return tuple(system), tuple(Message(role=r, parts=tuple(p)) for r, p in messages), frozenset(found)


def parse_output(value: Any) -> Message | None:
    """A response's ``output`` items as the one assistant message a next request repeats them as; None when an item
    cannot be read or is not the model's own."""
    try:
        sides = [_side(item, f"output[{index}]") for index, item in enumerate(_items(value))]
    except UnreadableRequest:
        return None
    if any(role is not Role.ASSISTANT for role, _, _ in sides):
        return None
    return Message(role=Role.ASSISTANT, parts=tuple(part for _, parts, _ in sides for part in parts))
