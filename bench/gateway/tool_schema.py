"""A tool call's arguments against the tool's own ``input_schema``: the exact subset a policy's replies need.

Checked: the value's JSON type (``type``, one name or a list), an object's ``required`` properties, its
``properties`` (each recursively), ``additionalProperties: false``, an ``enum``, and an array's ``items``. What a
schema says beyond that (``minimum``, ``format``, ...) is listed by :func:`unread_keywords`, so a report can say it
was not checked rather than pass it silently. Tests cross-check against ``jsonschema``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["CHECKED_KEYWORDS", "argument_errors", "unread_keywords"]

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
    "number": (int, float),
    "integer": (int,),
}
# Keywords that constrain nothing a value can break, or that this check reads.
CHECKED_KEYWORDS = frozenset(
    {"type", "required", "properties", "additionalProperties", "enum", "items", "description", "title", "default"}
)
_IGNORED = frozenset({"$schema", "examples"})


def _is(value: Any, name: str) -> bool:
    if name in ("number", "integer") and isinstance(value, bool):
        return False  # JSON's true is not a number
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(name, ()))


def argument_errors(schema: Mapping[str, Any], value: Any, where: str = "input") -> list[str]:
    """Every way ``value`` breaks ``schema``, each naming where (``input.query``); empty when it conforms."""
    errors: list[str] = []
    kinds = schema.get("type")
    names = [kinds] if isinstance(kinds, str) else list(kinds) if isinstance(kinds, list) else []
    if names and not any(_is(value, name) for name in names):
        return [*errors, f"{where}: expected {' or '.join(names)}, got {type(value).__name__} {value!r:.60}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: {value!r:.60} is not one of {schema['enum']!r:.120}")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        errors += [f"{where}: missing required {name!r}" for name in schema.get("required", ()) if name not in value]
        if schema.get("additionalProperties") is False:
            errors += [f"{where}: {name!r} is not a property of the tool" for name in value if name not in properties]
        for name, given in value.items():
            if isinstance(properties.get(name), dict):
                errors += argument_errors(properties[name], given, f"{where}.{name}")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            errors += argument_errors(schema["items"], item, f"{where}[{index}]")
    return errors


def unread_keywords(schema: Mapping[str, Any]) -> frozenset[str]:
    """The keywords of ``schema`` (and of its properties and items) that :func:`argument_errors` does not check."""
    found = set(schema) - CHECKED_KEYWORDS - _IGNORED
    nested = [*schema.get("properties", {}).values(), schema.get("items")]
    for child in nested:
        if isinstance(child, dict):
            found |= unread_keywords(child)
    return frozenset(found)
