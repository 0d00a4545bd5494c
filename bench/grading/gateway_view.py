"""What the gateway log says reached the model: the independent witness delivery is cross-checked against.

Claude Code sends hook context to the model as a user-message text block
``<system-reminder>\\n<hookName> hook additional context: <text>\\n</system-reminder>``; the hook name gives
the channel as it does in the session JSONL. CLI 2.1.332 (unlike 2.1.197) appends a PostToolUse hook's block to
the triggering tool result's content instead, so tool results are read too; a block an agent forged into a file it
reads shows up here but never in the transcript's injected steps, so it breaks agreement instead of adding delivery.
Assistant turns are never read: they are the model's own words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..gateway.exchange import ExchangeRecord
from ..gateway.wire import Part, RequestView
from .claude_code import hook_channel
from .transcript import Channel

__all__ = ["ReceivedContext", "hook_contexts", "received_texts"]

_HOOK_BLOCK = re.compile(
    r"<system-reminder>\s*(?P<hook>[^\s]+) hook additional context: (?P<text>.*?)\s*</system-reminder>", re.S
)


@dataclass(frozen=True)
class ReceivedContext:
    sequence: int  # the exchange that first carried it
    channel: Channel
    hook: str
    text: str


def _message_requests(exchanges: Iterable[ExchangeRecord]) -> Iterator[tuple[int, RequestView]]:
    for exchange in exchanges:
        route = exchange.path.split("?", 1)[0]
        if exchange.method == "POST" and route == "/v1/messages" and isinstance(exchange.request_body, dict):
            yield exchange.sequence, RequestView.of(exchange.request_body)


def hook_contexts(exchanges: Iterable[ExchangeRecord]) -> tuple[ReceivedContext, ...]:
    """Every distinct hook context the model was sent, in the order it was first sent."""
    seen: dict[tuple[str, str], ReceivedContext] = {}
    for sequence, view in _message_requests(exchanges):
        for text in view.texts(Part.USER) + view.texts(Part.TOOL_RESULTS):
            for match in _HOOK_BLOCK.finditer(text):
                hook, body = match["hook"], match["text"]
                seen.setdefault((hook, body), ReceivedContext(sequence, hook_channel(hook), hook, body))
    return tuple(seen.values())


def received_texts(exchanges: Iterable[ExchangeRecord]) -> tuple[str, ...]:
    """Every non-assistant text (system, user, tool results) of every messages request."""
    return tuple(text for _, view in _message_requests(exchanges) for text in view.texts(Part.ANY))
