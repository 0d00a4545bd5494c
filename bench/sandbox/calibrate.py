"""Calibration: the verifier must fail on the untouched start tree and pass once the oracle solution is applied.

This is what Harbor and SWE-bench do with gold solutions. A verifier that passes untouched measures nothing and
the challenge is refused; one that fails even with the oracle applied is broken or too strict. Both halves run on
the prebuilt start tree, the same tree the arms start from.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Literal

from ..contracts import ContractModel, Digest, Document, ImageId, Ref, Sha256, TreeDigest
from ..errors import ContractError, SandboxError
from ..stages import Ports, StageContext, StageKind, stage
from ..store import Store
from ..suite.challenge import ChallengeManifest, load_challenge
from .backends import ProcessOutcome, SandboxBackend
from .prebuild import PrebuildParams, prebuild, start_tree
from .verify import run_owned_script, run_verifier

__all__ = [
    "CalibrateInputs",
    "CalibrateOutputs",
    "CalibrateParams",
    "CalibrationReport",
    "CalibrationVerdict",
    "calibrate",
    "calibrate_stage",
    "calibrate_start",
    "require_calibrated",
]


class CalibrationVerdict(enum.StrEnum):
    CALIBRATED = "calibrated"
    PASSES_UNTOUCHED = "passes-untouched"  # refused: the verifier does not tell work from no work
    ORACLE_FAILS = "oracle-fails"  # refused: the verifier (or the oracle) is wrong
    NO_ORACLE = "no-oracle"  # only the untouched half could be checked


class CalibrationReport(Document):
    kind: Literal["calibration"] = "calibration"
    schema_version: Literal[2] = 2
    challenge_id: str
    image_id: str
    start: Digest
    untouched: Digest  # verifier-result document on the start tree
    untouched_outcome: ProcessOutcome  # the verifier's on the start tree: must not succeed
    oracle_tree: Digest | None
    oracle: Digest | None  # verifier-result document on the oracle tree
    oracle_outcome: ProcessOutcome | None  # the verifier's with the oracle applied: must succeed
    verdict: CalibrationVerdict


def calibrate(
    backend: SandboxBackend,
    store: Store,
    challenge_dir: Path,
    manifest: ChallengeManifest,
    image_id: ImageId,
    redacted: TreeDigest,
) -> CalibrationReport:
    """Prebuild ``redacted``, then :func:`calibrate_start` on the tree the arms would start from."""
    start = start_tree(prebuild(backend, redacted, PrebuildParams(image_id=image_id, environment=manifest.environment)))
    return calibrate_start(backend, store, challenge_dir, manifest, image_id, start)


def calibrate_start(
    backend: SandboxBackend,
    store: Store,
    challenge_dir: Path,
    manifest: ChallengeManifest,
    image_id: str,
    start: Digest,
) -> CalibrationReport:
    """Verify ``start`` untouched, apply the oracle, verify again; every result is stored."""
    untouched = run_verifier(backend, challenge_dir, manifest, image_id, start)
    report = CalibrationReport(
        challenge_id=manifest.challenge_id,
        image_id=image_id,
        start=start,
        untouched=store.put_document(untouched),
        untouched_outcome=untouched.outcome,
        oracle_tree=None,
        oracle=None,
        oracle_outcome=None,
        verdict=CalibrationVerdict.PASSES_UNTOUCHED,
    )
    if untouched.outcome is ProcessOutcome.SUCCEEDED:
        return report
    if manifest.oracle is None:
        return report.model_copy(update={"verdict": CalibrationVerdict.NO_ORACLE})
    oracle = manifest.oracle
    script = (oracle.runtime, oracle.asset, float(oracle.timeout_seconds))
    applied = run_owned_script(backend, challenge_dir, manifest, image_id, start, script, read_back=True)
    if applied.outcome is not ProcessOutcome.SUCCEEDED or applied.tree is None:
        raise SandboxError(
            f"the oracle of {manifest.challenge_id} did not apply ({applied.outcome.value}, exit "
            f"{applied.exit_code}): {applied.output[-500:]}"
        )
    solved = run_verifier(backend, challenge_dir, manifest, image_id, applied.tree)
    passed = solved.outcome is ProcessOutcome.SUCCEEDED
    update = {
        "oracle_tree": applied.tree,
        "oracle": store.put_document(solved),
        "oracle_outcome": solved.outcome,
        "verdict": CalibrationVerdict.CALIBRATED if passed else CalibrationVerdict.ORACLE_FAILS,
    }
    return report.model_copy(update=update)


def require_calibrated(report: CalibrationReport) -> None:
    """Refuse a challenge whose calibration did not show fail-untouched and pass-with-oracle."""
    if report.verdict is CalibrationVerdict.CALIBRATED:
        return
    why = {
        CalibrationVerdict.PASSES_UNTOUCHED: "its verifier passes on the untouched start tree",
        CalibrationVerdict.ORACLE_FAILS: "its verifier fails even with the oracle solution applied",
        CalibrationVerdict.NO_ORACLE: "it ships no oracle solution, so passing was never shown possible",
    }[report.verdict]
    raise SandboxError(f"challenge {report.challenge_id} is refused: {why}; fix the verifier or the oracle")


class CalibrateParams(ContractModel):
    """As for the verify stage, the pins repeat the manifest's so the key moves when the verifier or oracle does."""

    challenge_dir: str
    verifier_sha256: Sha256
    oracle_sha256: Sha256 | None
    image_id: ImageId


class CalibrateInputs(Ports):
    start: TreeDigest


class CalibrateOutputs(Ports):
    calibration: Ref[CalibrationReport]


@stage("calibrate", version=2, kind=StageKind.OBSERVED)
def calibrate_stage(context: StageContext, inputs: CalibrateInputs, params: CalibrateParams) -> CalibrateOutputs:
    """The ``calibration`` report on the ``start`` tree. A refused challenge is a recorded report."""
    directory = Path(params.challenge_dir)
    manifest = load_challenge(directory)
    pinned = (manifest.verifier.asset.sha256, manifest.oracle.asset.sha256 if manifest.oracle else None)
    if pinned != (params.verifier_sha256, params.oracle_sha256):
        raise ContractError(f"{directory} pins other verifier or oracle bytes than the plan; re-plan from the manifest")
    backend = context.service(SandboxBackend)
    report = calibrate_start(backend, context.store, directory, manifest, params.image_id, inputs.start)
    return CalibrateOutputs(calibration=context.store.put_document(report))
