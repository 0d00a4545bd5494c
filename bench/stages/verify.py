"""The verifier: a runner-owned script, pinned by SHA-256, run in a fresh container over the post-agent tree.

The script's bytes are checked against the manifest before anything runs (a mismatch is refused), written to a
private host directory and bind-mounted read-only at :data:`ASSET_DIR`, a path no arm container has. Python in
that container neither writes bytecode nor reads any the workspace holds (:data:`NO_BYTECODE`): a ``.pyc`` the agent
wrote cannot stand in for the source it did not fix (:mod:`.bytecode`). The verifier
container gets the challenge's limits, no network and the verifier's own timeout; its exit status and a bounded
copy of its output are the result: passed is :attr:`~.backends.ProcessOutcome.SUCCEEDED` (exit 0 in time).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import Field

from ..builder import Ports, StageContext, StageKind, stage
from ..contracts import ContractModel, Digest, Document, ImageId, Ref, Sha256, TreeDigest
from ..errors import ContractError
from ..sandbox.backends import ProcessOutcome, RunOutcome, RunRequest, SandboxBackend
from ..sandbox.layout import ASSET_DIR, RUNNER_SCRATCH
from ..sandbox.spec import Mount, container_spec
from ..suite.challenge import Asset, ChallengeManifest, NetworkMode, ScriptRuntime, load_challenge, read_asset

__all__ = [
    "NO_BYTECODE",
    "VerifierResult",
    "VerifyInputs",
    "VerifyOutputs",
    "VerifyParams",
    "run_owned_script",
    "run_verifier",
    "verify",
]


class VerifierResult(Document):
    kind: Literal["verifier-result"] = "verifier-result"
    schema_version: Literal[2] = 2
    challenge_id: str
    verifier_sha256: Sha256
    tree: Digest
    image_id: str
    outcome: ProcessOutcome  # succeeded: the tree passed
    exit_code: int | None
    output: str
    output_bytes: int
    seconds: float


# Every interpreter the script starts compiles from source: no bytecode is written, and what would be read is looked
# for under an empty prefix instead of each source's __pycache__ (a path the workspace never holds).
NO_BYTECODE = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "/nonexistent/pycache"}


def run_owned_script(
    backend: SandboxBackend,
    challenge_dir: Path,
    manifest: ChallengeManifest,
    image_id: str,
    tree: Digest,
    script: tuple[ScriptRuntime, Asset, float],
    *,
    read_back: bool,
) -> RunOutcome:
    """Run a pinned runner-owned script with the workspace as its working directory, in a fresh container."""
    runtime, asset, timeout = script
    data = read_asset(challenge_dir, asset)  # refuses a digest mismatch before any container exists
    name = PurePosixPath(asset.path).name
    private = Path(tempfile.mkdtemp(prefix=RUNNER_SCRATCH["verifier"]))
    try:
        private.chmod(0o755)  # the container's non-root user must read it
        (private / name).write_bytes(data)
        (private / name).chmod(0o644)
        mount = Mount.of(private, "runner:task", ASSET_DIR)
        command = (*runtime.interpreter, f"{ASSET_DIR}/{name}")
        spec = container_spec(
            image_id, manifest.environment, command, network=NetworkMode.NONE, env=NO_BYTECODE, mounts=(mount,)
        )
        return backend.run(RunRequest(spec=spec, workspace=tree, timeout_seconds=timeout, read_back=read_back))
    finally:
        shutil.rmtree(private, ignore_errors=True)


def run_verifier(
    backend: SandboxBackend, challenge_dir: Path, manifest: ChallengeManifest, image_id: str, tree: Digest
) -> VerifierResult:
    """Verify ``tree``: passed when the script exits 0 within its timeout."""
    verifier = manifest.verifier
    script = (verifier.runtime, verifier.asset, float(verifier.timeout_seconds))
    ran = run_owned_script(backend, challenge_dir, manifest, image_id, tree, script, read_back=False)
    return VerifierResult(
        challenge_id=manifest.challenge_id,
        verifier_sha256=verifier.asset.sha256,
        tree=tree,
        image_id=image_id,
        outcome=ran.outcome,
        exit_code=ran.exit_code,
        output=ran.output,
        output_bytes=ran.output_bytes,
        seconds=ran.seconds,
    )


class VerifyParams(ContractModel):
    """``verifier_sha256`` repeats the manifest's pin so the action key changes whenever the verifier does."""

    challenge_dir: str
    verifier_sha256: Sha256
    image_id: ImageId
    attempt: int = Field(default=1, ge=1)


class VerifyInputs(Ports):
    final: TreeDigest


class VerifyOutputs(Ports):
    verifier: Ref[VerifierResult]


@stage("verify", version=3, kind=StageKind.OBSERVED)
def verify(context: StageContext, inputs: VerifyInputs, params: VerifyParams) -> VerifyOutputs:
    """The ``verifier`` result on the ``final`` tree."""
    directory = Path(params.challenge_dir)
    manifest = load_challenge(directory)
    if manifest.verifier.asset.sha256 != params.verifier_sha256:
        raise ContractError(
            f"{directory} pins verifier {manifest.verifier.asset.sha256}, but the plan expects "
            f"{params.verifier_sha256}; re-plan from the current manifest"
        )
    result = run_verifier(context.service(SandboxBackend), directory, manifest, params.image_id, inputs.final)
    return VerifyOutputs(verifier=context.store.put_document(result))
