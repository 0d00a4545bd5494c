"""A graph arm as certification reads it: identity fields and node bodies, from a JSON (or JSON Lines) artifact.

Whatever schema a memory system uses, its frozen graph is text an agent may be shown. Every string (keys too) is
a node body, checked for the markers that apply everywhere; a string under a key named ``project``,
``workspace`` or ``branch`` is an identity field the apparatus writes, and also gets the stricter vocabulary.
An artifact that is not JSON is refused rather than skipped: a gate that cannot read a surface has not checked it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..contracts.strict_json import parse_json
from ..errors import ContractError

__all__ = ["IDENTITY_FIELDS", "GraphText", "graph_texts"]

IDENTITY_FIELDS = frozenset({"project", "workspace", "branch"})


@dataclass(frozen=True)
class GraphText:
    pointer: str  # JSON Pointer (RFC 6901) of the string; a key is named by its own pointer plus "#key"
    text: str
    identity: bool


def graph_texts(data: bytes, label: str) -> Iterator[GraphText]:
    """Every string in the graph artifact ``data``; ``label`` names it in errors."""
    for prefix, document in _documents(data, label):
        yield from _walk(document, prefix, identity=False)


def _documents(data: bytes, label: str) -> Iterator[tuple[str, Any]]:
    """The one JSON document, or each line of a JSON Lines file (recognised by a first line that is a whole
    value). Read strictly: a repeated key would hide its first value from this check but not from every reader."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ContractError(f"graph {label} is not UTF-8 ({exc}); certification reads JSON or JSON Lines") from exc
    lines = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    if len(lines) >= 2 and _is_value(lines[0][1]):
        for number, line in lines:
            yield f"/line{number}", parse_json(line, f"graph {label} line {number}")
        return
    yield "", parse_json(text, f"graph {label}")


def _is_value(line: str) -> bool:
    try:
        parse_json(line, "line")
    except ContractError:
        return False
    return True


def _walk(value: Any, pointer: str, identity: bool) -> Iterator[GraphText]:
    if isinstance(value, str):
        yield GraphText(pointer or "/", value, identity)
    elif isinstance(value, dict):
        for key, item in value.items():
            child = f"{pointer}/{_escape(key)}"
            yield GraphText(child + "#key", key, False)
            yield from _walk(item, child, key in IDENTITY_FIELDS)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{pointer}/{index}", identity)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")
