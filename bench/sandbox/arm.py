"""One pair of arm containers: two specs that differ only in the memory attachment, each run to a final tree.

:func:`prepare_pair` is called before either container exists: it refuses a spec that names the harness or the
experiment, records the diff of the two specs as a receipt, and refuses the pair when they differ in anything
but the declared memory attachment. :func:`run_arm` runs one arm from the shared start tree under the challenge's
agent timeout; an agent past its deadline is killed and the arm is recorded as timed out, its workspace still
read back so the audit sees what it did.
"""

from __future__ import annotations

import enum
from typing import Literal

from ..contracts import Digest, Document
from ..errors import SandboxError
from .base import RunRequest, RunStatus, SandboxBackend
from .spec import ContainerSpec, SpecDiffReceipt, check_neutral, check_one_respect, spec_diff

__all__ = ["ArmOutcome", "ArmResult", "prepare_pair", "run_arm"]


class ArmOutcome(enum.StrEnum):
    FINISHED = "finished"  # the agent exited 0
    FAILED = "failed"  # the agent exited non-zero
    TIMED_OUT = "timed-out"  # killed at agent_timeout_seconds


class ArmResult(Document):
    kind: Literal["arm-run"] = "arm-run"
    schema_version: Literal[1] = 1
    label: str
    spec: ContainerSpec
    start: Digest
    final: Digest
    outcome: ArmOutcome
    exit_code: int | None
    output: str
    output_bytes: int
    seconds: float


def prepare_pair(first: ContainerSpec, second: ContainerSpec, labels: tuple[str, str]) -> SpecDiffReceipt:
    """Check both specs and return their diff receipt; raises before any container starts."""
    check_neutral(first)
    check_neutral(second)
    receipt = spec_diff(first, second, labels)
    check_one_respect(receipt)
    return receipt


def run_arm(
    backend: SandboxBackend,
    label: str,
    spec: ContainerSpec,
    start: Digest,
    timeout_seconds: float,
    gateway: str | None = None,
) -> ArmResult:
    """Run one arm's agent command over ``start``; the result names the final tree for the audit."""
    check_neutral(spec)
    outcome = backend.run(RunRequest(spec=spec, workspace=start, timeout_seconds=timeout_seconds, gateway=gateway))
    if outcome.tree is None:
        raise SandboxError(f"arm {label}: the workspace was not read back from its container")
    if outcome.status is RunStatus.TIMED_OUT:
        result = ArmOutcome.TIMED_OUT
    else:
        result = ArmOutcome.FINISHED if outcome.exit_code == 0 else ArmOutcome.FAILED
    return ArmResult(
        label=label,
        spec=spec,
        start=start,
        final=outcome.tree,
        outcome=result,
        exit_code=outcome.exit_code,
        output=outcome.output,
        output_bytes=outcome.output_bytes,
        seconds=outcome.seconds,
    )
