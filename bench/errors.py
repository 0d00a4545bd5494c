"""The one error hierarchy of stele-bench.

Every error the package raises on purpose derives from :class:`BenchError`. The whole tree, wherever each class
lives::

    BenchError                          (bench.errors) base; keeps path / field / expected / actual / hint
     +-- ContractError                  a document or argument breaks its contract (names the field)
     |    +-- PlanError                 a plan's link or source breaks a stage's declaration
     |    +-- PreregistrationMoved      (bench.analysis.prereg) a frozen input moved since it was preregistered
     |    +-- BundleError               (bench.publish.bundle) a bundle file is not what publication expects
     |    +-- MixedKeysError            (bench.publish.svg) two comparability keys on one trend line
     +-- StoreError                     the object store cannot do what was asked
     |    +-- ObjectMissing             a digest names no stored object
     |    +-- ObjectCorrupt             stored bytes no longer hash to their name
     +-- StageError                     a stage was declared or invoked wrongly
     |    +-- MissingSurface            (bench.packaging.certify) certification was not given a surface
     +-- SourceError                    an input from outside the store (git repository, directory) is refused
     |    +-- CorpusError               (bench.packaging.corpus) a commit's tree is refused at a path
     |    +-- CommitNotFound            (bench.packaging.gitsource) a commit or ref is not in the repository
     +-- SandboxError                   the container engine (or the process backend) refused or failed
     +-- ExecutorError                  the executor (a Ray cluster) cannot be reached, or lost an invocation
     +-- ProvisionerError               a memory provisioner misbehaved (carries a reason code)
     |    +-- ProvisionRefused          (bench.provision.errors) one refusal, with its RefusalReason
     +-- FenceError                     the money fence stopped a paid run
     |    +-- FenceStopped              (bench.fence.errors) ... and recorded why in a FenceRecord
     +-- ProviderError                  (bench.fence.errors) a provider's quota API could not be read
     |    +-- ProviderUnreachable       transport: refused, reset, timed out, or a 5xx/429 answer
     |    +-- KeyRejected               the provider refused the key (401/403)
     |    +-- ProviderResponseInvalid   an answer that is not the documented shape
     +-- GatewayError                   (bench.gateway.errors) the gateway cannot start or serve as configured
     |    +-- PolicyDigestMismatch      a policy file's bytes are not the pinned ones
     +-- PublicationRefused             (bench.publish.checks) a publication check failed; lists the findings

User and configuration mistakes raise; a stage that ran and failed is a recorded result, not an exception.
Errors keep their inputs as attributes (``path``, ``field``, ``expected``, ``actual``, ``hint`` here, and each
subclass its own, such as ``digest`` or ``reason``) so callers report them without parsing messages, and
:meth:`BenchError.details` gives them as one JSON-ready mapping.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BenchError",
    "ContractError",
    "ExecutorError",
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
    """Base of every error stele-bench raises on purpose; ``message`` is one line naming what and where."""

    exit_code = 1

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        field: str | None = None,
        expected: object = None,
        actual: object = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.field = field
        self.expected = expected
        self.actual = actual
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}; {self.hint}" if self.hint else self.message

    def details(self) -> dict[str, Any]:
        """The error's inputs, by attribute name, as JSON-ready values (absent ones left out)."""
        found: dict[str, Any] = {"type": type(self).__name__}
        for name, value in vars(self).items():
            if name.startswith("_") or name == "message" or value is None:
                continue
            found[name] = value if isinstance(value, str | int | float | bool) else str(value)
        return found


class ContractError(BenchError, ValueError):
    """A document or argument breaks its contract."""

    exit_code = 2


class PlanError(ContractError):
    """An invocation's input breaks its stage's declaration; refused when the plan is loaded, before doit runs."""

    def __init__(
        self, invocation: str, port: str, problem: str, *, expected: str | None = None, actual: str | None = None
    ) -> None:
        super().__init__(
            f"plan invocation {invocation!r}: input {port!r} {problem}", field=port, expected=expected, actual=actual
        )
        self.invocation = invocation
        self.port = port


class StoreError(BenchError):
    """The object store cannot do what was asked."""


class ObjectMissing(StoreError, KeyError):
    """A digest names no stored object."""

    def __init__(self, digest: object) -> None:
        super().__init__(
            f"object {digest} is not in the store",
            hint="run `stele-bench store fsck` to see what else is missing",
        )
        self.digest = digest

    def __str__(self) -> str:  # KeyError would quote the message
        return BenchError.__str__(self)


class ObjectCorrupt(StoreError):
    """Stored bytes no longer hash to their name."""

    def __init__(self, digest: object, actual: object) -> None:
        super().__init__(
            f"object {digest} is corrupt: its bytes hash to {actual}; it was refused",
            expected=str(digest),
            actual=str(actual),
            hint="run `stele-bench store fsck` and re-create it from its source",
        )
        self.digest = digest


class StageError(BenchError):
    """A stage was declared or invoked wrongly."""


class SourceError(BenchError):
    """An input from outside the store is refused; the message names the path."""


class SandboxError(BenchError):
    """The container engine refused or failed; the message says what to run next."""


class ExecutorError(BenchError):
    """The executor cannot run invocations: its cluster is unreachable, or an invocation was lost with its node."""


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
