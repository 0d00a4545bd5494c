"""The API dialects the gateway speaks, one module each; :func:`dialect_of` picks one by its contract name."""

from __future__ import annotations

from ...contracts import ApiDialect
from .anthropic import AnthropicMessages
from .base import Dialect, ErrorKind, Rejection, UnreadableRequest
from .openai_responses import OpenAiResponses

__all__ = ["Dialect", "ErrorKind", "Rejection", "UnreadableRequest", "dialect_of"]

_DIALECTS: dict[ApiDialect, Dialect] = {d.name: d for d in (AnthropicMessages(), OpenAiResponses())}


def dialect_of(name: ApiDialect) -> Dialect:
    """The dialect named ``name``; every member of :class:`ApiDialect` has one (a test checks it)."""
    return _DIALECTS[name]
