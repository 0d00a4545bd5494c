"""Prebuild: run the challenge's ``prebuild_argv`` once over the redacted tree; its result starts both arms.

It runs under the challenge's CPU and memory limits, in the same image and as the same user as the arms, so a
build cache made here is valid there. A model-only network has no gateway yet at this point, so prebuild then
runs with no network; ``public`` and ``none`` are kept as declared. A prebuild that fails or times out stops the
pair: the receipt records why and carries no start tree. So does a start tree that names the harness: the
prebuild's output is scanned with the terms certification uses (:func:`bench.packaging.identity.scan_tree`), since
certification saw only the tree before it.

The receipt's ``outcome`` is how the prebuild process ended (:class:`~.backends.ProcessOutcome`), or None when the
challenge declares nothing to run.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..builder import Ports, StageContext, StageKind, stage
from ..contracts import ContractModel, Digest, Document, ImageId, Ref, TreeDigest
from ..errors import SandboxError
from ..packaging.identity import scan_tree
from ..sandbox.backends import ProcessOutcome, RunRequest, SandboxBackend
from ..sandbox.spec import container_spec
from ..suite.challenge import Environment, NetworkMode

__all__ = [
    "PrebuildInputs",
    "PrebuildOutputs",
    "PrebuildParams",
    "PrebuildReceipt",
    "prebuild",
    "run_prebuild",
    "start_tree",
]

PREBUILD_TIMEOUT = 1800
_SHOWN = 20  # findings named in a stopped pair's reason


class PrebuildReceipt(Document):
    kind: Literal["prebuild"] = "prebuild"
    schema_version: Literal[2] = 2
    redacted: Digest
    image_id: str
    argv: tuple[str, ...]
    outcome: ProcessOutcome | None  # None: no prebuild_argv, so the redacted tree is the start tree
    exit_code: int | None
    output: str
    seconds: float
    start: Digest | None  # the byte-identical start of both arms; None when the pair is stopped
    reason: str | None  # why the pair stopped


class PrebuildParams(ContractModel):
    image_id: ImageId
    environment: Environment
    timeout_seconds: float = Field(default=PREBUILD_TIMEOUT, gt=0)
    attempt: int = Field(default=1, ge=1)


def run_prebuild(backend: SandboxBackend, redacted: Digest, params: PrebuildParams) -> PrebuildReceipt:
    """Run the prebuild (if any) and say what the arms start from, or why the pair stops."""
    argv = params.environment.prebuild_argv
    receipt = PrebuildReceipt(
        redacted=redacted,
        image_id=params.image_id,
        argv=argv,
        outcome=None,
        exit_code=None,
        output="",
        seconds=0.0,
        start=redacted,
        reason=None,
    )
    if not argv:
        return receipt
    mode = params.environment.network_mode
    network = NetworkMode.NONE if mode is NetworkMode.MODEL_ONLY else mode
    spec = container_spec(params.image_id, params.environment, argv, network=network)
    ran = backend.run(RunRequest(spec=spec, workspace=redacted, timeout_seconds=params.timeout_seconds))
    reason = {
        ProcessOutcome.SUCCEEDED: None,
        ProcessOutcome.FAILED: f"prebuild {list(argv)} exited {ran.exit_code}",
        ProcessOutcome.TIMED_OUT: f"prebuild {list(argv)} passed its {params.timeout_seconds:g}s deadline",
    }[ran.outcome]
    if reason is None and ran.tree is not None:
        reason = _named_harness(backend, ran.tree)
    update = {
        "outcome": ran.outcome,
        "exit_code": ran.exit_code,
        "output": ran.output,
        "seconds": ran.seconds,
        "start": ran.tree if reason is None else None,
        "reason": reason,
    }
    return receipt.model_copy(update=update)


def _named_harness(backend: SandboxBackend, tree: Digest) -> str | None:
    """Why a prebuilt tree may not start the arms: what it wrote names the harness (certification saw only the
    redacted tree, so what the prebuild added is scanned here, with the same terms)."""
    findings = scan_tree(backend.store, tree)
    if not findings:
        return None
    shown = "; ".join(str(finding) for finding in findings[:_SHOWN])
    more = f"; and {len(findings) - _SHOWN} more" if len(findings) > _SHOWN else ""
    return f"the prebuilt start tree names the harness in {len(findings)} place(s): {shown}{more}"


def start_tree(receipt: PrebuildReceipt) -> Digest:
    """The arms' start tree, or an error carrying the recorded reason the pair stopped."""
    if receipt.start is None:
        raise SandboxError(f"the pair is stopped: {receipt.reason}; see the prebuild receipt's output")
    return receipt.start


class PrebuildInputs(Ports):
    redacted: TreeDigest


class PrebuildOutputs(Ports):
    prebuild: Ref[PrebuildReceipt]
    start: TreeDigest | None  # absent when the prebuild failed: the receipt says why


@stage("prebuild", version=4, kind=StageKind.OBSERVED)
def prebuild(context: StageContext, inputs: PrebuildInputs, params: PrebuildParams) -> PrebuildOutputs:
    """The ``prebuild`` receipt, and the ``start`` tree when it built."""
    receipt = run_prebuild(context.service(SandboxBackend), inputs.redacted, params)
    start = TreeDigest(receipt.start) if receipt.start is not None else None
    return PrebuildOutputs(prebuild=context.store.put_document(receipt), start=start)
