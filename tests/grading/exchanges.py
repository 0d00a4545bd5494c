"""A messages request as the gateway records it, for tests that lay out a harness conversation by hand."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from bench.gateway import ExchangeRecord

__all__ = ["messages_exchange"]


def messages_exchange(sequence: int, messages: list[dict[str, Any]], answer: object) -> ExchangeRecord:
    """Exchange ``sequence``: a streamed ``/v1/messages`` request carrying ``messages``, answered ``answer``."""
    return ExchangeRecord(
        sequence=sequence, arm="a", method="POST", path="/v1/messages?beta=true", request_headers={},
        request_body={"messages": messages}, status=200, streamed=True, response_body=answer, rule=None, usage=None,
        cost_usd=Decimal(0), started_at="2026-01-01T00:00:00.000+00:00", duration_ms=1,
    )  # fmt: skip
