"""Why the adapter refused a provisioner or a fixture artifact: one reason code per way of being subtly wrong.

Each refusal is a :class:`ProvisionRefused` (a :class:`bench.errors.ProvisionerError`) whose ``reason`` is a
:class:`RefusalReason`, so a receipt records the code and a test can tell the refusals apart without reading
messages.
"""

from __future__ import annotations

from enum import StrEnum

from bench.errors import ProvisionerError

__all__ = ["ProvisionRefused", "RefusalReason"]


class RefusalReason(StrEnum):
    ARTIFACT_MISSING = "artifact-missing"
    ARTIFACT_ESCAPES_ROOT = "artifact-escapes-root"
    ARTIFACT_SHA256_MISMATCH = "artifact-sha256-mismatch"
    LAUNCH_FAILED = "launch-failed"
    NOT_ONE_JSON_OBJECT = "not-one-json-object"
    UNKNOWN_FIELDS = "unknown-fields"
    INVALID_RESPONSE = "invalid-response"
    NONZERO_EXIT = "nonzero-exit"
    TIMEOUT = "timeout"
    STDOUT_TOO_LARGE = "stdout-too-large"


class ProvisionRefused(ProvisionerError):
    """The adapter refused what a provisioner did, or an artifact it was about to hand one.

    ``verb`` is the protocol verb involved (None for artifact checks before any process ran), ``diagnostics`` the
    bounded stderr the provisioner wrote (kept for the operator, never parsed) and ``stdout_object`` the JSON object
    the provisioner printed when there was exactly one, so a refused restore can still be torn down by its project.
    """

    def __init__(
        self,
        reason: RefusalReason,
        message: str,
        *,
        verb: str | None = None,
        diagnostics: str = "",
        stdout_object: dict[str, object] | None = None,
    ) -> None:
        super().__init__(reason.value, message)
        self.reason_code = reason
        self.verb = verb
        self.diagnostics = diagnostics
        self.stdout_object = stdout_object
