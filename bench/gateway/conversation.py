"""Digests that let a reader follow one conversation through the exchange log.

A harness's own conversation grows: each request repeats the previous request's messages, then the assistant
message the previous answer carried, then new user content. So a reader can tell a request that continues the
conversation from one crafted beside it by comparing digests, without re-reading every body. Claude Code moves
its ``cache_control`` markers from turn to turn (they say where to cache, not what the model is shown), so they
are left out of a message's digest. Which requests count is the grading side's rule, not decided here.
"""

from __future__ import annotations

from typing import Any

from ..contracts import ContractModel, Sha256, canonical_json

__all__ = ["MessageChain", "message_digest"]


def _without_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_control(v) for v in value]
    return value


def message_digest(message: Any) -> Sha256:
    """SHA-256 of a message's canonical JSON, ``cache_control`` markers left out at every depth."""
    return Sha256.of(canonical_json(_without_cache_control(message)))


class MessageChain(ContractModel):
    """The digests of one messages exchange.

    Request B continues request A when ``B.messages`` starts with ``A.messages`` followed by ``A.reply``.
    """

    messages: tuple[Sha256, ...]  # one per message of the request, in order
    reply: Sha256 | None  # the answer as a next request repeats it (role assistant, its content); None: no answer

    @classmethod
    def of(cls, request: dict[str, Any], answer: Any) -> MessageChain | None:
        """The chain of a messages request and its answer; None when the request has no list of messages."""
        messages = request.get("messages")
        if not isinstance(messages, list):
            return None
        content = answer.get("content") if isinstance(answer, dict) and answer.get("type") == "message" else None
        reply = None if content is None else message_digest({"role": "assistant", "content": content})
        return cls(messages=tuple(message_digest(m) for m in messages), reply=reply)
