"""A recorded exchange read back in the neutral model, through the dialect it was recorded in.

Readers of the gateway's log (grading) see what a request showed the model and what the model answered as
:class:`~.neutral.Conversation` and :class:`~.neutral.Message`, whichever API carried them: the record names its
dialect (:attr:`~.exchange.ExchangeRecord.dialect`), so nothing is guessed from the bytes.
"""

from __future__ import annotations

from ..contracts.api_dialect import ApiDialect
from .dialects import dialect_of
from .errors import UnreadableRequest
from .exchange import ExchangeRecord
from .neutral import Conversation, Message

__all__ = ["UnreadableRequest", "answer_message", "is_model_request", "request_conversation"]


def is_model_request(exchange: ExchangeRecord, dialect: ApiDialect) -> bool:
    """Whether ``exchange`` is a request to the model in ``dialect`` (its model route, a JSON object body)."""
    route = exchange.path.split("?", 1)[0]
    return (
        exchange.dialect is dialect
        and exchange.method == "POST"
        and route == dialect_of(dialect).model_path
        and isinstance(exchange.request_body, dict)
    )


def request_conversation(exchange: ExchangeRecord) -> Conversation:
    """What the request showed the model; :class:`UnreadableRequest` when its dialect cannot read it."""
    body = exchange.request_body
    if not isinstance(body, dict):
        raise UnreadableRequest(f"exchange {exchange.sequence}: the request body is not a JSON object")
    return dialect_of(exchange.dialect).parse(body)


def answer_message(exchange: ExchangeRecord) -> Message | None:
    """The model's answer as the assistant message a next request repeats; None when the exchange holds none."""
    return dialect_of(exchange.dialect).reply(exchange.response_body)
