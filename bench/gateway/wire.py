"""The Anthropic Messages API on the wire: what a request shows the model, and the API's error body.

Claude Code posts ``/v1/messages?beta=true`` with ``stream: true``; :mod:`.stream` has the event stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = ["Part", "RequestView", "api_error"]


class Part(StrEnum):
    """Which part of a request a phrase is looked for in. Assistant turns never count: they are the model's own."""

    ANY = "any"  # system, user text and tool results
    SYSTEM = "system"
    USER = "user"  # text blocks of user-role messages
    TOOL_RESULTS = "tool-results"
    LATEST = "latest"  # everything in the last user-role message (the newest thing the model is shown)


def _block_texts(content: Any) -> list[str]:
    """Texts of a content value: a bare string or a list of blocks (text, or tool_result holding either)."""
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            texts.append(block["text"])
    return texts


@dataclass(frozen=True)
class RequestView:
    """The texts a Messages request shows the model, by part."""

    system: tuple[str, ...]
    user: tuple[str, ...]
    tool_results: tuple[str, ...]
    latest: tuple[str, ...]
    assistant_turns: int

    @classmethod
    def of(cls, body: dict[str, Any]) -> RequestView:
        user: list[str] = []
        results: list[str] = []
        latest: list[str] = []
        turns = 0
        for message in body.get("messages") or []:
            if not isinstance(message, dict):
                continue
            if message.get("role") == "assistant":
                turns += 1
                continue
            latest = []
            content = message.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            for block in blocks:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_result":
                    found = _block_texts(block.get("content"))
                    results.extend(found)
                else:
                    found = _block_texts([block])
                    user.extend(found)
                latest.extend(found)
        return cls(tuple(_block_texts(body.get("system"))), tuple(user), tuple(results), tuple(latest), turns)

    def texts(self, part: Part) -> tuple[str, ...]:
        if part is Part.ANY:
            return self.system + self.user + self.tool_results
        if part is Part.SYSTEM:
            return self.system
        if part is Part.USER:
            return self.user
        if part is Part.TOOL_RESULTS:
            return self.tool_results
        return self.latest

    @property
    def has_tool_result(self) -> bool:
        return bool(self.tool_results)


def api_error(error_type: str, message: str) -> dict[str, Any]:
    """The body Anthropic sends with a 4xx/5xx status, which clients show to the user verbatim."""
    return {"type": "error", "error": {"type": error_type, "message": message}}
