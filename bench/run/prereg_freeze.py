"""Preregistrations for a suite's challenges: frozen before any run, checked before every run.

``manifests/<suite>/<challenge>/v<N>.json`` freezes, for one challenge, everything that decides its outcome (see
:mod:`bench.analysis.prereg`). A run observes every part of it again from the suite's files and refuses to start,
naming each moved field and the command that records a new version, when anything moved. The budget and the
analysis plan have no other source: the run enforces the budget's caps and publishes with the plan's confidence.

Three commands write here and nothing else does: ``prereg freeze`` (version 1 of each challenge that has none),
``prereg correct`` (version N+1 from what the suite holds now, with the reason) and ``prereg supersede`` (the
record excluding every published run made under the replaced version, ``superseded-v<N>.json``). Nothing is ever
overwritten.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from ..analysis.attempt_record import PairedAttempt
from ..analysis.prereg import (
    AnalysisPlan,
    Budget,
    FrozenInputs,
    ObservedInputs,
    Preregistration,
    UndeliveredRule,
    check_unmoved,
    correct,
    field_digests,
    load_preregistrations,
    moved_fields,
    stated_power,
    supersession,
)
from ..contracts import ContractModel, Digest, DigestValue, canonical_json
from ..errors import ContractError
from ..gateway import Mode
from ..suite.challenge import read_asset
from ..suite.suite import ChallengeCategory, LoadedChallenge, Suite

__all__ = [
    "BudgetChoice",
    "correction_moves",
    "current_preregistration",
    "freeze",
    "observed_inputs",
    "preregistration_files",
    "record_correction",
    "record_supersession",
    "suite_argument",
]

MAX_ATTEMPTS = 5  # enough to reach the exact continuous tests; a run may make fewer
DEFAULT_TOKENS_PER_ARM = 2_000_000
DEFAULT_CONFIDENCE = "0.95"
# What grading looks for that no other frozen part names (hooks and tool servers are the systems' declarations).
_GRADED = {"phrases", "anchored_paths", "identifiers"}


@dataclass(frozen=True)
class BudgetChoice:
    """What a freeze or a correction sets beyond what the suite's files say; None keeps the default (or the old)."""

    attempts: int | None = None
    max_tokens_per_arm: int | None = None
    max_wall_seconds_per_arm: int | None = None
    confidence: str | None = None
    undelivered: UndeliveredRule | None = None


def suite_argument(suite: Suite) -> str:
    """The suite directory as the command line would name it: relative to where it runs when it can be."""
    try:
        return str(suite.root.relative_to(Path.cwd()))
    except ValueError:
        return str(suite.root)


def _digest_of(value: object) -> DigestValue:
    return DigestValue.of(canonical_json(value))


def _model_access(suite: Suite, loaded: LoadedChallenge) -> dict[str, DigestValue]:
    """How the model is reached: the policy's bytes in policy mode, every field of the provider settings in forward."""
    manifest = suite.manifest
    access = {"gateway_mode": _digest_of(manifest.gateway_mode.value)}
    if manifest.gateway_mode is Mode.POLICY:
        policy = loaded.entry.policy
        assert policy is not None  # the suite contract requires a policy per challenge in policy mode
        access["policy"] = DigestValue.of(read_asset(loaded.directory, policy))
    elif manifest.forward is not None:
        access.update(field_digests(manifest.forward.model_dump(mode="json"), "forward"))
    return access


def observed_inputs(suite: Suite, loaded: LoadedChallenge) -> ObservedInputs:
    """Everything a run of ``loaded`` would use now that a preregistration freezes, read from the suite's files."""
    manifest = loaded.manifest
    oracle = read_asset(loaded.directory, manifest.oracle.asset) if manifest.oracle is not None else None
    fixture: dict[str, object] = {"fixture": suite.fixture.frozen_form(), "graph_arm": suite.manifest.fixture.graph_arm}
    # The noise a run adds and what retrieval is scored against, frozen once a suite states them; a suite that
    # never did keeps the digest it was frozen with.
    if suite.manifest.fixture.pool_sizes is not None:
        fixture["pool_sizes"] = list(suite.manifest.fixture.pool_sizes)
    if loaded.entry.oracle:
        fixture["oracle"] = list(loaded.entry.oracle)
    return ObservedInputs(
        challenge=field_digests(manifest.model_dump(mode="json")),
        verifier=DigestValue.of(read_asset(loaded.directory, manifest.verifier.asset)),
        oracle=None if oracle is None else DigestValue.of(oracle),
        model=suite.manifest.model,
        models=dict(suite.manifest.models),
        model_access=_model_access(suite, loaded),
        memory_systems={system.name: DigestValue(system.digest) for system in suite.manifest.memory_systems},
        grading=field_digests(suite.memory(manifest.challenge_id).model_dump(mode="json", include=_GRADED)),
        fixture=_digest_of(fixture),
    )


def _cents(amount: Decimal) -> int:
    return int((amount * 100).to_integral_value("ROUND_CEILING"))


def _steps(loaded: LoadedChallenge) -> int:
    """How many prompts an arm runs: each gets the challenge's agent timeout."""
    return 1 if loaded.manifest.follow_up_prompt is None else 2


def _budget(suite: Suite, loaded: LoadedChallenge, choice: BudgetChoice, old: Budget | None) -> Budget:
    forward = suite.manifest.forward
    return Budget(
        attempts=choice.attempts or (old.attempts if old else MAX_ATTEMPTS),
        # policy mode reaches no paid provider; forward mode's caps, rounded up to whole cents
        max_usd_cents_per_pair=0 if forward is None else _cents(forward.pair_cap_usd),
        max_usd_cents_per_arm=0 if forward is None else _cents(forward.arm_cap_usd),
        max_tokens_per_arm=choice.max_tokens_per_arm or (old.max_tokens_per_arm if old else DEFAULT_TOKENS_PER_ARM),
        max_wall_seconds_per_arm=choice.max_wall_seconds_per_arm
        or (old.max_wall_seconds_per_arm if old else _steps(loaded) * loaded.manifest.agent_timeout_seconds),
    )


def _analysis(suite: Suite, loaded: LoadedChallenge, choice: BudgetChoice, old: AnalysisPlan | None) -> AnalysisPlan:
    # A low-memory control is chosen because memory should not help: an undelivered treatment there is the
    # expected null, counted; elsewhere a pair whose memory never arrived says nothing about memory.
    default = (
        UndeliveredRule.INCLUDE
        if loaded.entry.category is ChallengeCategory.LOW_MEMORY_CONTROL
        else UndeliveredRule.EXCLUDE
    )
    # The baseline is the suite's: a correction that adds (or changes) the suite's baseline states it again.
    update: dict[str, object] = {"baseline": suite.manifest.baseline}
    if choice.confidence is not None:
        update["confidence"] = choice.confidence
    if choice.undelivered is not None:
        update["undelivered_treatment"] = choice.undelivered
    base = old or AnalysisPlan(
        confidence=DEFAULT_CONFIDENCE,
        undelivered_treatment=default,
        # stated now, before any outcome: what this many attempts per challenge can detect, alone and pooled
        minimum_detectable_effect=stated_power(DEFAULT_CONFIDENCE, "0.8", MAX_ATTEMPTS, len(suite.challenges)),
        baseline=suite.manifest.baseline,
    )
    return AnalysisPlan.model_validate({**base.model_dump(), **update})


def _write_new(path: Path, document: ContractModel) -> Path:
    """Write ``document`` to ``path``, which must not exist: a preregistration is never overwritten."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    try:
        with path.open("x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        raise ContractError(f"{path} exists; a preregistration file is never overwritten", path=str(path)) from None
    return path


def freeze(suite: Suite, directory: Path, choice: BudgetChoice = BudgetChoice()) -> list[Path]:
    """Write version 1 for every challenge that has none yet; never overwrites. Returns the files written."""
    written = []
    existing = load_preregistrations(directory) if directory.is_dir() else {}
    for loaded in suite.challenges:
        challenge = loaded.manifest.challenge_id
        if challenge in existing:
            continue
        frozen = FrozenInputs(
            **dict(observed_inputs(suite, loaded)),
            budget=_budget(suite, loaded, choice, None),
            analysis=_analysis(suite, loaded, choice, None),
        )
        prereg = Preregistration(challenge=challenge, version=1, frozen=frozen)
        written.append(_write_new(directory / challenge / "v1.json", prereg))
    return written


def _versions(suite: Suite, loaded: LoadedChallenge, directory: Path) -> list[Preregistration]:
    challenge = loaded.manifest.challenge_id
    versions = _loaded(directory, _stamps(directory)).get(challenge) if directory.is_dir() else None
    if not versions:
        raise ContractError(
            f"challenge {challenge} has no preregistration under {directory}; "
            f"freeze one with `stele-bench prereg freeze {suite_argument(suite)}` before running it"
        )
    return versions


def _stamps(directory: Path) -> tuple[tuple[str, int, int, int, int], ...]:
    """Which preregistration files ``directory`` holds and the stat fields a write moves (as ``git status`` tells)."""
    files = ((str(path), path.stat()) for path in sorted(directory.glob("*/v*.json")))
    return tuple((name, held.st_ino, held.st_size, held.st_mtime_ns, held.st_ctime_ns) for name, held in files)


@functools.lru_cache(maxsize=4)
def _loaded(directory: Path, stamps: tuple[tuple[str, int, int, int, int], ...]) -> dict[str, list[Preregistration]]:
    """Every challenge's versions, read once per process while no file of them changes: a plan asks once per
    challenge, and each ask read (and chain-checked) every challenge's."""
    return load_preregistrations(directory)


def current_preregistration(suite: Suite, loaded: LoadedChallenge, directory: Path, attempts: int) -> Preregistration:
    """The newest version for ``loaded``, after checking nothing it froze has moved; refuses otherwise."""
    challenge = loaded.manifest.challenge_id
    prereg = _versions(suite, loaded, directory)[-1]
    command = f'stele-bench prereg correct {suite_argument(suite)} {challenge} --reason "WHY"'
    check_unmoved(prereg, observed_inputs(suite, loaded), command)
    if prereg.frozen.analysis.baseline != suite.manifest.baseline:
        raise ContractError(
            f"{challenge} v{prereg.version} froze the baseline {prereg.frozen.analysis.baseline!r}, the suite now "
            f"names {suite.manifest.baseline!r}; record a new version with `{command}`",
            field="baseline",
            expected=str(prereg.frozen.analysis.baseline),
            actual=str(suite.manifest.baseline),
        )
    if attempts > prereg.frozen.budget.attempts:
        raise ContractError(
            f"{attempts} attempts asked for {challenge}, but v{prereg.version} froze at most "
            f"{prereg.frozen.budget.attempts}; ask for fewer or record a new version with `{command}`"
        )
    return prereg


def record_correction(
    suite: Suite, loaded: LoadedChallenge, directory: Path, reason: str, choice: BudgetChoice = BudgetChoice()
) -> tuple[Path, Preregistration, Preregistration]:
    """Write version N+1 from what the suite holds now (and ``choice``), superseding version N; never overwrites.

    Returns the file written, version N and version N+1."""
    old = _versions(suite, loaded, directory)[-1]
    frozen = FrozenInputs(
        **dict(observed_inputs(suite, loaded)),
        budget=_budget(suite, loaded, choice, old.frozen.budget),
        analysis=_analysis(suite, loaded, choice, old.frozen.analysis),
    )
    corrected = correct(old, frozen, reason)
    path = directory / corrected.challenge / f"v{corrected.version}.json"
    return _write_new(path, corrected), old, corrected


def correction_moves(old: Preregistration, new: Preregistration) -> list[str]:
    """The fields a correction changed: observed inputs, budget and analysis alike."""
    moved = [m.field for m in moved_fields(old.frozen, new.frozen)]
    for part in ("budget", "analysis"):
        before, after = getattr(old.frozen, part).model_dump(), getattr(new.frozen, part).model_dump()
        moved += [f"{part}.{key}" for key in sorted(before) if before[key] != after.get(key)]
    return moved


def record_supersession(
    loaded: LoadedChallenge, directory: Path, version: int, records: Mapping[Digest, PairedAttempt]
) -> Path:
    """Write ``superseded-v<version>.json``: every run among ``records`` made under ``version``, excluded."""
    challenge = loaded.manifest.challenge_id
    versions = {prereg.version: prereg for prereg in load_preregistrations(directory).get(challenge, [])}
    if version not in versions or version + 1 not in versions:
        raise ContractError(
            f"{challenge} v{version} is not superseded under {directory}: versions {sorted(versions)}; "
            f"record the correction first with `stele-bench prereg correct`",
            field="version",
        )
    document = supersession(versions[version], versions[version + 1], records)
    return _write_new(directory / challenge / f"superseded-v{version}.json", document)


def preregistration_files(directory: Path, challenge: str) -> list[Path]:
    """Every version and supersession record of ``challenge``, for publication beside its runs."""
    folder = directory / challenge
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix == ".json") if folder.is_dir() else []
