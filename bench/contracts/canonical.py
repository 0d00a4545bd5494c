"""The single canonical JSON encoding behind every document digest."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

__all__ = ["canonical_bytes", "canonical_json"]


def canonical_json(value: Any) -> bytes:
    """Encode plain JSON data canonically: sorted keys, fixed separators, UTF-8, no NaN or Infinity.

    Two equal values always give the same bytes, so the bytes can be hashed into a name.
    """
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        raise ValueError(f"cannot encode canonically: {exc} (NaN and Infinity have no JSON form)") from exc
    return text.encode("utf-8")


def canonical_bytes(document: BaseModel) -> bytes:
    """Encode a contract model canonically (its JSON-mode dump, every field included)."""
    return canonical_json(document.model_dump(mode="json"))
