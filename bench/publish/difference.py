"""The first place two versions of a published object differ, said the way a reader looks for it.

Documents are compared as JSON, field by field in key order, so a flipped verifier outcome reads
``outcome: recorded "succeeded", re-derived "failed"``; anything else is compared line by line.
"""

from __future__ import annotations

from typing import Any

from ..contracts.strict_json import parse_json
from ..errors import ContractError

__all__ = ["first_difference"]

_MISSING = object()
_SHOWN = 80  # characters of a value shown; a transcript line can be long


def _shown(value: Any) -> str:
    if value is _MISSING:
        return "(absent)"
    text = repr(value) if not isinstance(value, str) else f'"{value}"'
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _walk(recorded: Any, derived: Any, path: str) -> str | None:
    if isinstance(recorded, dict) and isinstance(derived, dict):
        for key in sorted(recorded.keys() | derived.keys()):
            found = _walk(recorded.get(key, _MISSING), derived.get(key, _MISSING), f"{path}.{key}" if path else key)
            if found is not None:
                return found
        return None
    if isinstance(recorded, list) and isinstance(derived, list):
        for index in range(max(len(recorded), len(derived))):
            left = recorded[index] if index < len(recorded) else _MISSING
            right = derived[index] if index < len(derived) else _MISSING
            found = _walk(left, right, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    if recorded == derived and type(recorded) is type(derived):
        return None
    return f"{path or '(the whole value)'}: recorded {_shown(recorded)}, re-derived {_shown(derived)}"


def _lines(recorded: bytes, derived: bytes) -> str:
    left, right = recorded.splitlines(), derived.splitlines()
    for number, (a, b) in enumerate(zip(left, right, strict=False), start=1):
        if a != b:
            return f"line {number}: recorded {_shown(a.decode('utf-8', 'replace'))}, " + (
                f"re-derived {_shown(b.decode('utf-8', 'replace'))}"
            )
    return f"line {min(len(left), len(right)) + 1}: one side ends ({len(left)} against {len(right)} lines)"


def first_difference(recorded: bytes | None, derived: bytes | None) -> str:
    """Where ``recorded`` and ``derived`` first differ: a field path for JSON documents, else a line."""
    if recorded is None or derived is None:
        return "the recorded output is not in the bundle" if recorded is None else "the stage derived no such output"
    try:
        found = _walk(
            parse_json(recorded, "recorded", max_bytes=len(recorded) + 1),
            parse_json(derived, "derived", max_bytes=len(derived) + 1),
            "",
        )
    except ContractError:
        return _lines(recorded, derived)
    return found or _lines(recorded, derived)
