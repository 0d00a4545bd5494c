"""Errors of the money fence and of the provider client it reads.

::

    BenchError
     +-- FenceError                    (bench.errors) the fence stopped a paid run
     |    +-- FenceStopped             ... and recorded why: ``record`` is the FenceRecord's digest
     |    +-- AccountStopped           (.account) refused before spending: a stop latched the key's account
     +-- ProviderError                 the provider's quota API could not be read as documented
          +-- ProviderUnreachable      transport: refused, reset, timed out, or a 5xx/429 answer
          +-- KeyRejected              the provider refused the key (401/403)
          +-- ProviderResponseInvalid  an answer that is not the documented shape

The fence turns every ProviderError into a recorded check verdict; the split above is what decides which way a
check fails (open for a flaky transport, closed for everything else).
"""

from __future__ import annotations

from ..contracts import Digest
from ..errors import BenchError, FenceError

__all__ = ["FenceStopped", "KeyRejected", "ProviderError", "ProviderResponseInvalid", "ProviderUnreachable"]


class FenceStopped(FenceError):
    """The fence stopped the pair; its checks, including the failing one, are in the store under ``record``."""

    def __init__(self, check: str, message: str, record: Digest) -> None:
        super().__init__(check, f"{message} (fence record {record})")
        self.record = record


class ProviderError(BenchError):
    """The provider's quota API could not be read; ``url`` names the endpoint (never the key)."""

    exit_code = 12  # the money fence's family: a paid run cannot be guarded

    def __init__(self, url: str, message: str) -> None:
        super().__init__(f"GET {url}: {message}")
        self.url = url


class ProviderUnreachable(ProviderError):
    """A transport failure: a retry might succeed, so the answer is unknown rather than negative."""


class KeyRejected(ProviderError):
    """The provider refused the key; ``status`` is 401 or 403."""

    def __init__(self, url: str, status: int, message: str) -> None:
        super().__init__(url, f"the provider rejected the key with {status}: {message}")
        self.status = status


class ProviderResponseInvalid(ProviderError):
    """The provider answered, but not with the documented shape."""
