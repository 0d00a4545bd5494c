"""The one error hierarchy of stele-bench.

Every error the package raises on purpose derives from :class:`BenchError`::

    BenchError
     +-- ContractError        a document or argument breaks its contract (names the field)
     |    +-- PlanError       a plan's link or source breaks a stage's declaration
     +-- StoreError           the object store cannot do what was asked
     |    +-- ObjectMissing   a digest names no stored object
     |    +-- ObjectCorrupt   stored bytes no longer hash to their name
     +-- StageError           a stage was declared or invoked wrongly
     +-- SourceError          an input from outside the store (git repository, directory) is refused
     +-- SandboxError         the container engine refused or failed
     +-- ProvisionerError     a memory provisioner misbehaved (carries a reason code)
     +-- FenceError           the money fence stopped a paid run

User and configuration mistakes raise; a stage that ran and failed is a recorded result, not an exception.
Errors keep their inputs as attributes so callers can report them without parsing messages.
"""

from __future__ import annotations

__all__ = [
    "BenchError",
    "ContractError",
    "FenceError",
    "ObjectCorrupt",
    "ObjectMissing",
    "PlanError",
    "ProvisionerError",
    "SandboxError",
    "SourceError",
    "StageError",
    "StoreError",
]


class BenchError(Exception):
    """Base of every error stele-bench raises on purpose."""

    exit_code = 1


class ContractError(BenchError, ValueError):
    """A document or argument breaks its contract."""

    exit_code = 2


class PlanError(ContractError):
    """An invocation's input breaks its stage's declaration; refused when the plan is loaded, before doit runs."""

    def __init__(
        self, invocation: str, port: str, problem: str, *, expected: str | None = None, actual: str | None = None
    ) -> None:
        super().__init__(f"plan invocation {invocation!r}: input {port!r} {problem}")
        self.invocation = invocation
        self.port = port
        self.expected = expected
        self.actual = actual


class StoreError(BenchError):
    """The object store cannot do what was asked."""


class ObjectMissing(StoreError, KeyError):
    """A digest names no stored object."""

    def __init__(self, digest: object) -> None:
        super().__init__(
            f"object {digest} is not in the store; run `stele-bench store fsck` to see what else is missing"
        )
        self.digest = digest

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class ObjectCorrupt(StoreError):
    """Stored bytes no longer hash to their name."""

    def __init__(self, digest: object, actual: object) -> None:
        super().__init__(
            f"object {digest} is corrupt: its bytes hash to {actual}; "
            "it was refused; run `stele-bench store fsck` and re-create it from its source"
        )
        self.digest = digest
        self.actual = actual


class StageError(BenchError):
    """A stage was declared or invoked wrongly."""


class SourceError(BenchError):
    """An input from outside the store is refused; the message names the path."""


class SandboxError(BenchError):
    """The container engine refused or failed; the message says what to run next."""


class ProvisionerError(BenchError):
    """A memory provisioner misbehaved; ``reason`` is the recorded reason code."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{message} [{reason}]")
        self.reason = reason


class FenceError(BenchError):
    """The money fence stopped a paid run; ``check`` names the check that stopped it."""

    def __init__(self, check: str, message: str) -> None:
        super().__init__(f"money fence, {check}: {message}")
        self.check = check
