"""Errors of the model gateway.

BenchError
 +-- GatewayError              the gateway cannot start or serve as configured
      +-- PolicyDigestMismatch  a policy file's bytes are not the pinned ones
      +-- UnreadableRequest     a request body its dialect cannot read as a conversation (answered 400)
"""

from __future__ import annotations

from pathlib import Path

from ..errors import BenchError

__all__ = ["GatewayError", "PolicyDigestMismatch", "UnreadableRequest"]


class GatewayError(BenchError):
    """The gateway cannot start or serve as configured; the message names the setting."""

    exit_code = 13


class PolicyDigestMismatch(GatewayError):
    """A policy file changed after it was pinned: answering from it would answer from an unrecorded policy."""

    def __init__(self, path: Path, expected: str, actual: str) -> None:
        super().__init__(
            f"policy {path} has SHA-256 {actual}, but the gateway config pins {expected}; "
            "restore the pinned policy or re-pin the config to the new digest on purpose",
            path=str(path),
            expected=expected,
            actual=actual,
        )


class UnreadableRequest(GatewayError):
    """A request body its dialect cannot read as a conversation; the message names what and where. The gateway
    answers it 400 and records it; it never leaves the gateway."""
