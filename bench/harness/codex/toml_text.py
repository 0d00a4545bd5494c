"""A deterministic TOML writer for the few value shapes Codex's configuration needs (the standard library reads
TOML but cannot write it): strings, integers, booleans, lists of strings and inline tables of strings.

Tables come out in the order given, keys within a table sorted, so the same configuration is the same bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

__all__ = ["TomlTable", "TomlValue", "toml_document"]

TomlValue = str | int | bool | tuple[str, ...] | Mapping[str, str]
TomlTable = Mapping[str, TomlValue]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _string(text: str) -> str:
    # A JSON string is a TOML basic string: both escape \" \\ \b \f \n \r \t and \uXXXX the same way.
    return json.dumps(text, ensure_ascii=False)


def _value(value: TomlValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, tuple):
        return "[" + ", ".join(_string(item) for item in value) + "]"
    return "{ " + ", ".join(f"{_key(k)} = {_string(v)}" for k, v in sorted(value.items())) + " }" if value else "{}"


def _lines(table: TomlTable) -> list[str]:
    return [f"{_key(key)} = {_value(table[key])}" for key in sorted(table)]


def toml_document(top: TomlTable, tables: Sequence[tuple[Sequence[str], TomlTable]]) -> str:
    """``top``'s keys, then each ``[dotted.name]`` table in order; a blank line between sections."""
    sections = ["\n".join(_lines(top))] if top else []
    for name, table in tables:
        header = "[" + ".".join(_key(part) for part in name) + "]"
        sections.append("\n".join([header, *_lines(table)]))
    return "\n\n".join(sections) + "\n"
