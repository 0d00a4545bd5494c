"""Calibration: the verifier must fail on the untouched start tree and pass once the oracle solution is applied.

This is what Harbor and SWE-bench do with gold solutions. A verifier that passes untouched measures nothing and
the challenge is refused; one that fails even with the oracle applied is broken or too strict. Both halves run on
the prebuilt start tree, the same tree the arms start from.

Each half runs the verifier a preregistered number of times (``CalibrationPlan.verifier_repeats``, default 5): a
verifier whose runs on one tree disagree is flaky and refused, naming the runs, because a flaky verifier turns
noise into discordant pairs. The report holds what calibration decides by: each run's outcome, the trees, the audits
and the verdict. What the runs observed (each run's result document, with its seconds and its output) is a
separate document beside it, :class:`CalibrationRuns`, which no stage downstream reads: so the report's digest, and
with it the key of every paired attempt, is the same in every run of the same suite on the same trees.

What the prebuild wrote (the redacted tree against the start tree) and the oracle's
tree are also audited against ``allowed_output_paths`` exactly as an arm's tree is (:func:`~.audit.audit_trees`):
a prebuild or an oracle (or the toolchain either runs) that writes outside the allowlist fails calibration naming
the paths, before any agent's money is spent discovering that every arm's reward is 0.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from ..builder import Ports, StageContext, StageKind, stage
from ..contracts import ContractModel, Digest, Document, ImageId, PortablePath, Ref, Sha256, TreeDigest
from ..errors import ContractError, SandboxError
from ..sandbox.backends import ProcessOutcome, SandboxBackend
from ..store import Store
from ..suite.challenge import ChallengeManifest, Oracle, load_challenge
from .audit import audit_trees
from .prebuild import PrebuildParams, run_prebuild, start_tree
from .verify import VerifierResult, run_owned_script, run_verifier

__all__ = [
    "DEFAULT_REPEATS",
    "CalibrateInputs",
    "CalibrateOutputs",
    "CalibrateParams",
    "Calibrated",
    "CalibrationReport",
    "CalibrationRuns",
    "CalibrationVerdict",
    "VerifierRuns",
    "calibrate",
    "calibrate_start",
    "require_calibrated",
    "run_calibration",
]

DEFAULT_REPEATS = 5  # the preregistration's default (``CalibrationPlan``); one run would hide a flaky verifier
Repeats = Annotated[int, Field(ge=1, le=50)]


class CalibrationVerdict(enum.StrEnum):
    CALIBRATED = "calibrated"
    PASSES_UNTOUCHED = "passes-untouched"  # refused: the verifier does not tell work from no work
    ORACLE_FAILS = "oracle-fails"  # refused: the verifier (or the oracle) is wrong
    NO_ORACLE = "no-oracle"  # only the untouched half could be checked
    FLAKY = "flaky"  # refused: the verifier's runs on one tree disagree
    UNDECLARED_OUTPUT = "undeclared-output"  # refused: the prebuild or the oracle wrote outside allowed_output_paths


class VerifierRuns(ContractModel):
    """The verifier's repeated runs on one tree: each one's outcome, in run order."""

    outcomes: tuple[ProcessOutcome, ...]

    @property
    def agreed(self) -> ProcessOutcome | None:
        """The one outcome every run had, or None when they disagree."""
        return self.outcomes[0] if len(set(self.outcomes)) == 1 else None

    def disagreement(self, tree: str) -> str:
        """Which runs (numbered from 1) had which outcome, for the refusal."""
        runs = {
            outcome: ", ".join(str(i) for i, o in enumerate(self.outcomes, start=1) if o is outcome)
            for outcome in dict.fromkeys(self.outcomes)
        }
        return f"on the {tree} tree " + "; ".join(f"run(s) {which} {o.value}" for o, which in runs.items())


class CalibrationReport(Document):
    """What calibration decided, and by what: decided facts only (see the module docstring)."""

    kind: Literal["calibration"] = "calibration"
    schema_version: Literal[4] = 4
    challenge_id: str
    image_id: str
    start: Digest
    repeats: Repeats
    untouched: VerifierRuns  # on the start tree: must fail every time
    oracle_tree: Digest | None
    oracle: VerifierRuns | None  # with the oracle applied: must pass every time
    prebuild_audit: Digest | None  # the mutation audit of the redacted tree against the start tree; None: not given
    prebuild_undeclared: tuple[PortablePath, ...]  # what the prebuild wrote outside allowed_output_paths
    oracle_audit: Digest | None  # the mutation audit of the start tree against the oracle's
    undeclared_outputs: tuple[PortablePath, ...]  # what the oracle's tree changed outside allowed_output_paths
    verdict: CalibrationVerdict
    reason: str  # why, in a sentence naming the runs or paths; empty when calibrated


class CalibrationRuns(Document):
    """What calibration's verifier runs observed: each run's result document (its seconds, its output), in run
    order; beside the report, read by no stage downstream."""

    kind: Literal["calibration-runs"] = "calibration-runs"
    schema_version: Literal[1] = 1
    challenge_id: str
    untouched: tuple[Ref[VerifierResult], ...]
    oracle: tuple[Ref[VerifierResult], ...]


@dataclass(frozen=True)
class Calibrated:
    report: CalibrationReport
    runs: CalibrationRuns


def run_calibration(
    backend: SandboxBackend,
    store: Store,
    challenge_dir: Path,
    manifest: ChallengeManifest,
    image_id: ImageId,
    redacted: TreeDigest,
    repeats: int = DEFAULT_REPEATS,
) -> Calibrated:
    """Prebuild ``redacted``, then :func:`calibrate_start` on the tree the arms would start from."""
    start = start_tree(
        run_prebuild(backend, redacted, PrebuildParams(image_id=image_id, environment=manifest.environment))
    )
    return calibrate_start(backend, store, challenge_dir, manifest, image_id, start, repeats, redacted)


def _runs(store: Store, repeats: int, verify: Callable[[], VerifierResult]) -> tuple[Ref[VerifierResult], ...]:
    return tuple(store.put_document(verify()) for _ in range(repeats))


def _outcomes(store: Store, runs: Sequence[Ref[VerifierResult]]) -> VerifierRuns:
    return VerifierRuns(outcomes=tuple(result.outcome for result in store.get_documents(runs, VerifierResult)))


def _audit(store: Store, before: Digest, after: Digest, manifest: ChallengeManifest) -> tuple[Digest, tuple[str, ...]]:
    """The stored audit of ``before`` against ``after`` and the paths it found outside the allowlist."""
    receipt = audit_trees(store, TreeDigest(before), TreeDigest(after), manifest.allowed_output_paths)
    return store.put_document(receipt), tuple(m.path for m in receipt.mutations if not m.allowed)


def _verdict(
    untouched: VerifierRuns, oracle: VerifierRuns | None, undeclared: Mapping[str, Sequence[str]]
) -> tuple[CalibrationVerdict, str]:
    """The first reason to refuse, in the order a reader asks: can the verifier be trusted at all, then each half."""
    halves = [("untouched", untouched)] + ([("oracle", oracle)] if oracle is not None else [])
    flaky = [runs.disagreement(tree) for tree, runs in halves if runs.agreed is None]
    if flaky:
        return CalibrationVerdict.FLAKY, "the verifier disagrees with itself " + " and ".join(flaky)
    if untouched.agreed is ProcessOutcome.SUCCEEDED:
        return CalibrationVerdict.PASSES_UNTOUCHED, "the verifier passes on the untouched start tree"
    named = [f"the {step} wrote {', '.join(paths)}" for step, paths in undeclared.items() if paths]
    if named:
        return CalibrationVerdict.UNDECLARED_OUTPUT, " and ".join(named) + (
            " outside allowed_output_paths; declare what the toolchain writes"
        )
    if oracle is None:
        return CalibrationVerdict.NO_ORACLE, "no oracle solution, so passing was never shown possible"
    if oracle.agreed is not ProcessOutcome.SUCCEEDED:
        return CalibrationVerdict.ORACLE_FAILS, "the verifier fails even with the oracle solution applied"
    return CalibrationVerdict.CALIBRATED, ""


@dataclass(frozen=True)
class _OracleCheck:
    """The oracle's half of calibration: the tree it made, that tree's audit, and the verifier's runs on it."""

    tree: Digest
    audit: Digest
    undeclared: tuple[str, ...]
    runs: tuple[Ref[VerifierResult], ...]
    outcomes: VerifierRuns


def _check_oracle(
    backend: SandboxBackend,
    store: Store,
    challenge_dir: Path,
    manifest: ChallengeManifest,
    image_id: str,
    start: Digest,
    repeats: int,
    oracle: Oracle,
) -> _OracleCheck:
    """Apply ``oracle`` to ``start``, audit the tree it made and verify that tree ``repeats`` times."""
    script = (oracle.runtime, oracle.asset, float(oracle.timeout_seconds))
    applied = run_owned_script(backend, challenge_dir, manifest, image_id, start, script, read_back=True)
    if applied.outcome is not ProcessOutcome.SUCCEEDED or applied.tree is None:
        raise SandboxError(
            f"the oracle of {manifest.challenge_id} did not apply ({applied.outcome.value}, exit "
            f"{applied.exit_code}): {applied.output[-500:]}"
        )
    solved = applied.tree
    audit, undeclared = _audit(store, start, solved, manifest)
    runs = _runs(store, repeats, lambda: run_verifier(backend, challenge_dir, manifest, image_id, solved))
    return _OracleCheck(solved, audit, undeclared, runs, _outcomes(store, runs))


def calibrate_start(
    backend: SandboxBackend,
    store: Store,
    challenge_dir: Path,
    manifest: ChallengeManifest,
    image_id: str,
    start: Digest,
    repeats: int = DEFAULT_REPEATS,
    redacted: Digest | None = None,
) -> Calibrated:
    """Audit what the prebuild wrote (when ``redacted`` is given), verify ``start`` untouched ``repeats`` times,
    apply the oracle, audit its tree and verify it as often."""
    prebuild_audit, prebuild_undeclared = (None, ()) if redacted is None else _audit(store, redacted, start, manifest)
    untouched_runs = _runs(store, repeats, lambda: run_verifier(backend, challenge_dir, manifest, image_id, start))
    untouched = _outcomes(store, untouched_runs)
    checked = None
    if manifest.oracle is not None and untouched.agreed is not ProcessOutcome.SUCCEEDED:
        checked = _check_oracle(backend, store, challenge_dir, manifest, image_id, start, repeats, manifest.oracle)
    oracle = None if checked is None else checked.outcomes
    undeclared = () if checked is None else checked.undeclared
    verdict, reason = _verdict(untouched, oracle, {"prebuild": prebuild_undeclared, "oracle": undeclared})
    report = CalibrationReport(
        challenge_id=manifest.challenge_id,
        image_id=image_id,
        start=start,
        repeats=repeats,
        untouched=untouched,
        oracle_tree=None if checked is None else checked.tree,
        oracle=oracle,
        prebuild_audit=prebuild_audit,
        prebuild_undeclared=tuple(PortablePath(p) for p in prebuild_undeclared),
        oracle_audit=None if checked is None else checked.audit,
        undeclared_outputs=tuple(PortablePath(p) for p in undeclared),
        verdict=verdict,
        reason=reason,
    )
    oracle_runs = () if checked is None else checked.runs
    runs = CalibrationRuns(challenge_id=manifest.challenge_id, untouched=untouched_runs, oracle=oracle_runs)
    return Calibrated(report, runs)


def require_calibrated(report: CalibrationReport) -> None:
    """Refuse a challenge whose calibration did not show fail-untouched and pass-with-oracle, every time."""
    if report.verdict is not CalibrationVerdict.CALIBRATED:
        raise SandboxError(
            f"challenge {report.challenge_id} is refused ({report.verdict.value}): {report.reason}; "
            "fix the verifier, the oracle or the allowlist"
        )


class CalibrateParams(ContractModel):
    """As for the verify stage, the pins repeat the manifest's so the key moves when the verifier or oracle does."""

    challenge_dir: str
    verifier_sha256: Sha256
    oracle_sha256: Sha256 | None
    image_id: ImageId
    verifier_repeats: Repeats = DEFAULT_REPEATS  # as the preregistration froze it


class CalibrateInputs(Ports):
    redacted: TreeDigest  # what the prebuild started from: its writes are audited too
    start: TreeDigest


class CalibrateOutputs(Ports):
    calibration: Ref[CalibrationReport]  # what downstream stages read
    runs: Ref[CalibrationRuns]  # what the runs observed


@stage("calibrate", version=4, kind=StageKind.OBSERVED)
def calibrate(context: StageContext, inputs: CalibrateInputs, params: CalibrateParams) -> CalibrateOutputs:
    """The ``calibration`` report on the ``start`` tree. A refused challenge is a recorded report."""
    directory = Path(params.challenge_dir)
    manifest = load_challenge(directory)
    pinned = (manifest.verifier.asset.sha256, manifest.oracle.asset.sha256 if manifest.oracle else None)
    if pinned != (params.verifier_sha256, params.oracle_sha256):
        raise ContractError(f"{directory} pins other verifier or oracle bytes than the plan; re-plan from the manifest")
    backend = context.service(SandboxBackend)
    done = calibrate_start(
        backend,
        context.store,
        directory,
        manifest,
        params.image_id,
        inputs.start,
        params.verifier_repeats,
        inputs.redacted,
    )
    store = context.store
    return CalibrateOutputs(calibration=store.put_document(done.report), runs=store.put_document(done.runs))
