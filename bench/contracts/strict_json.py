"""The one strict JSON reader for everything read from outside: files, wire messages, plan specs, manifests.

``json.loads`` lets the last of two equal keys win, reads ``NaN`` and ``Infinity``, turns ``1e400`` into
infinity, parses a 400-digit integer, keeps lone surrogate escapes that no encoder can write back, and recurses
until Python's stack gives out. Each of those lets a document mean something its author's tools do not show, or
crash the reader (or a later writer) instead of refusing. Here each is a refusal naming the document: a repeated
key, a non-JSON constant, a number too large for a float, nesting deeper than :data:`MAX_DEPTH`, an integer
outside 64 bits, a lone surrogate, a document over its size limit, bytes that are not UTF-8, and anything after
the one value (a second JSON value and trailing text that is not JSON are told apart).
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from pathlib import Path
from typing import Any

from ..errors import ContractError
from .checked_files import MAX_DOCUMENT_BYTES, read_bounded

__all__ = ["MAX_BYTES", "MAX_DEPTH", "parse_json", "parse_json_object", "read_json_object"]

MAX_DEPTH = 64
MAX_BYTES = MAX_DOCUMENT_BYTES
_INT_LIMIT = 2**63
# A string: the unrolled form, where each character can be taken one way only. The alternation
# '"(?:[^"\\]|\\.)*"' matches the same strings but stepped through them a character at a time, and was three
# quarters of reading a 1.3 MB publication manifest (33 ms against 7 ms).
_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_WHITESPACE = " \t\n\r"  # JSON's whitespace; str.strip() would also drop Unicode spaces JSON does not allow
# A surrogate's escape (\uD800-\uDFFF); the only way a lone surrogate gets into text decoded from UTF-8 here.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"it repeats the key {key!r}; a repeated key has no single meaning")
        seen[key] = value
    return seen


def _constant(name: str) -> Any:
    raise ValueError(f"it contains {name}, which is not JSON")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"it holds the number {text[:24]}, too large for a 64-bit float")
    return value


def _integer(text: str) -> int:
    value = int(text)
    if not -_INT_LIMIT <= value < _INT_LIMIT:
        raise ValueError(f"it holds the integer {text[:24]}{'...' if len(text) > 24 else ''}, outside 64 bits")
    return value


_DECODER = json.JSONDecoder(object_pairs_hook=_unique, parse_constant=_constant, parse_float=_float, parse_int=_integer)


_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _depth(text: str) -> int:
    # With no escape and the quotes paired, the strings are every other piece between quotes: half the regex's time.
    plain = "\\" not in text and text.count('"') % 2 == 0
    structure = "".join(text.split('"')[::2]) if plain else _STRINGS.sub("", text)
    brackets = _NOT_BRACKETS.sub("", structure)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def _lone_surrogate(value: Any) -> str | None:
    """The first string (key or value) in ``value`` holding a lone surrogate, which UTF-8 cannot encode."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item
    return None


def _may_hold_surrogate(data: bytes | str, text: str) -> bool:
    """Whether the value parsed from ``text`` can hold a lone surrogate, before walking all of it: text decoded
    from UTF-8 here holds none of its own (the decoder refuses them), so only an escape can make one; text given
    as a string may hold one raw. Walking every string of a 5,000-file manifest was a sixth of verifying it."""
    if _SURROGATE_ESCAPE.search(text):
        return True
    if isinstance(data, bytes):
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _after(text: str, end: int) -> str:
    """Why the text from ``end`` on is refused: a second JSON value, or trailing text that is not JSON."""
    while end < len(text) and text[end] in _WHITESPACE:
        end += 1
    try:
        _DECODER.raw_decode(text, end)
    except ValueError:
        shown = text[end : end + 20]
        return f"it has trailing text that is not JSON after the value (at offset {end}: {shown!r})"
    return f"it holds a second JSON value (at offset {end}); expected exactly one"


def parse_json(data: bytes | str, what: str, *, max_bytes: int = MAX_BYTES) -> Any:
    """The JSON value in ``data``, or a :class:`ContractError` naming ``what`` and why it was refused."""
    try:
        if len(data) > max_bytes:
            raise ValueError(f"it is {len(data)} bytes, over the {max_bytes}-byte limit")
        text = (data.decode("utf-8") if isinstance(data, bytes) else data).strip(_WHITESPACE)
        if not text:
            raise ValueError("it is empty; expected one JSON value")
        if _depth(text) > MAX_DEPTH:
            raise ValueError(f"it nests deeper than {MAX_DEPTH} levels")
        value, end = _DECODER.raw_decode(text)
        if end != len(text):
            raise ValueError(_after(text, end))
        surrogate = _lone_surrogate(value) if _may_hold_surrogate(data, text) else None
        if surrogate is not None:
            raise ValueError(f"it holds a lone surrogate escape in {surrogate[:24]!r}, which is not Unicode text")
    except UnicodeDecodeError as exc:
        raise ContractError(f"{what} is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ContractError(f"{what} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:
        raise ContractError(f"{what} is refused: {exc}") from None
    return value


def parse_json_object(data: bytes | str, what: str, *, max_bytes: int = MAX_BYTES) -> dict[str, Any]:
    value = parse_json(data, what, max_bytes=max_bytes)
    if not isinstance(value, dict):
        raise ContractError(f"{what} is a JSON {type(value).__name__}, not an object")
    return value


def read_json_object(path: Path, what: str, hint: str = "") -> dict[str, Any]:
    """The JSON object in the file ``path`` (a regular file, read with a bound); every refusal names the file."""
    data = read_bounded(path, what, hint=hint or None)
    try:
        return parse_json_object(data, f"{what} {path}")
    except ContractError as exc:
        exc.path = str(path)
        raise
