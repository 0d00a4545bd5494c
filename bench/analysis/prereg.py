"""Preregistration: what a run froze before it ran, versioned, and the check that refuses a moved run.

A manifest freezes the prompt, the verifier, the model, every memory system's declaration (by digest, under its
name), the budget, the analysis plan (with the power the design promises: the minimum detectable effect at the
planned attempts, stated before any outcome exists, and the baseline every system is also compared against) and
how often calibration runs the verifier on each tree. A run checks its
observed inputs against the manifest before starting and refuses, naming every moved field, when anything
changed. An apparatus correction never edits a manifest: it writes version N+1 that names the old one, and the
runs under the old version are excluded (``supersede``), kept whole in the record.

On disk, ``manifests/<challenge>/v<N>.json`` holds version N as canonical JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from ..contracts import ContractModel, Digest, Document, canonical_bytes
from ..contracts.files import read_contract
from ..errors import ContractError
from ..suite.memory_system import SystemName
from .admission import AdmissionDecision, ReasonCode, decide
from .attempt_record import PairedAttempt
from .paired import DesignPower, design_power

__all__ = [
    "PUBLIC_CONTRACTS",
    "AnalysisPlan",
    "Budget",
    "CalibrationPlan",
    "FrozenInputs",
    "Moved",
    "Preregistration",
    "PreregistrationMoved",
    "StatedPower",
    "check_unmoved",
    "correct",
    "load_preregistrations",
    "stated_power",
    "supersede",
]


class Budget(ContractModel):
    attempts: Annotated[int, Field(ge=1)]
    max_usd_cents_per_pair: Annotated[int, Field(ge=0)]
    max_tokens_per_arm: Annotated[int, Field(ge=1)]
    max_wall_seconds_per_arm: Annotated[int, Field(ge=1)]


Probability = Annotated[str, Field(pattern=r"^0\.[0-9]*[1-9]$")]


class StatedPower(ContractModel):
    """The minimum detectable effect at the planned attempts, stated before any outcome is seen.

    The smallest difference in pass rates the exact test detects with the target power under the stated
    ``assumption`` that no pair favours the reference arm (:mod:`~.power` says where that holds as a bound); a
    ``minimum_detectable_effect`` of None says no effect is detectable at that many pairs. ``per_challenge`` is
    one challenge's test at the planned attempts, ``pooled`` the stratified test over every challenge the suite
    declared.
    """

    assumption: Literal["no-pair-favours-the-reference-arm"] = "no-pair-favours-the-reference-arm"
    per_challenge: DesignPower
    pooled: DesignPower
    challenges: Annotated[int, Field(ge=1)]


class AnalysisPlan(ContractModel):
    """The analysis, fixed before any outcome is seen.

    ``power`` is the target power the minimum detectable effect is stated at; ``minimum_detectable_effect`` that
    statement (absent from preregistrations written before it existed); ``baseline`` names the memory system every
    other is also compared against, attempt by attempt (the static-context baseline: the notes written down).
    """

    confidence: Probability
    binary_test: Literal["mcnemar-exact"] = "mcnemar-exact"
    effect_interval: Literal["conditional-odds-ratio-clopper-pearson"] = "conditional-odds-ratio-clopper-pearson"
    continuous_tests: Literal["sign-and-wilcoxon-signed-rank-exact"] = "sign-and-wilcoxon-signed-rank-exact"
    exploratory_below_attempts: Literal[5] = 5
    pooled_test: Literal["stratified-conditional-exact-common-odds-ratio"] = (
        "stratified-conditional-exact-common-odds-ratio"
    )
    power: Probability = "0.8"
    minimum_detectable_effect: StatedPower | None = None
    baseline: SystemName | None = None


class CalibrationPlan(ContractModel):
    """How calibration runs the verifier: ``verifier_repeats`` times on the untouched tree and as often on the
    oracle's tree; any disagreement among the runs on one tree refuses the challenge as flaky."""

    verifier_repeats: Annotated[int, Field(ge=1, le=50)] = 5


def stated_power(confidence: str, power: str, attempts: int, challenges: int) -> StatedPower:
    """The statement a preregistration freezes: the minimum detectable effect of one challenge's test at
    ``attempts`` pairs and of the pooled test at ``attempts * challenges``."""
    alpha, target = 1 - Fraction(confidence), Fraction(power)
    return StatedPower(
        per_challenge=design_power(attempts, alpha, target),
        pooled=design_power(attempts * challenges, alpha, target),
        challenges=challenges,
    )


class FrozenInputs(ContractModel):
    prompt: Digest
    verifier: Digest
    model: Annotated[str, Field(min_length=1)]
    memory_systems: Annotated[dict[str, Digest], Field(min_length=1)]  # name -> digest of its declaration
    budget: Budget
    analysis: AnalysisPlan
    calibration: CalibrationPlan = Field(default_factory=CalibrationPlan)


class Preregistration(Document):
    kind: Literal["preregistration"] = "preregistration"
    schema_version: Literal[1] = 1
    challenge: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
    version: Annotated[int, Field(ge=1)]
    frozen: FrozenInputs
    supersedes: Digest | None = None
    correction: Annotated[str, Field(max_length=4000)] | None = None

    @model_validator(mode="after")
    def _versions_chain(self) -> Preregistration:
        first = self.version == 1
        if first != (self.supersedes is None) or first != (self.correction is None):
            raise ValueError(
                f"version {self.version} of {self.challenge}: version 1 has no 'supersedes' and no 'correction'; "
                "every later version names the version it supersedes and why"
            )
        return self

    @property
    def digest(self) -> Digest:
        return Digest.of(canonical_bytes(self))


@dataclass(frozen=True)
class Moved:
    field: str
    frozen: Any
    observed: Any


class PreregistrationMoved(ContractError):
    """A run was about to start with inputs that differ from what its preregistration froze."""

    def __init__(self, challenge: str, version: int, moved: tuple[Moved, ...]) -> None:
        lines = "; ".join(f"{m.field}: frozen {m.frozen!r}, now {m.observed!r}" for m in moved)
        super().__init__(
            f"refusing to start {challenge} v{version}: {len(moved)} frozen input(s) moved ({lines}); "
            "restore them, or write a corrected preregistration version",
            field=moved[0].field if moved else None,
            expected=moved[0].frozen if moved else None,
            actual=moved[0].observed if moved else None,
        )
        self.challenge = challenge
        self.version = version
        self.moved = moved


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        flat: dict[str, Any] = {}
        for key in sorted(value):
            flat.update(_flatten(value[key], f"{prefix}.{key}" if prefix else key))
        return flat
    return {prefix: value}


def check_unmoved(prereg: Preregistration, observed: FrozenInputs) -> None:
    """Raise ``PreregistrationMoved`` naming every frozen field whose observed value differs."""
    frozen = _flatten(prereg.frozen.model_dump(mode="json"))
    now = _flatten(observed.model_dump(mode="json"))
    moved = tuple(
        Moved(f, frozen.get(f), now.get(f)) for f in sorted(set(frozen) | set(now)) if frozen.get(f) != now.get(f)
    )
    if moved:
        raise PreregistrationMoved(prereg.challenge, prereg.version, moved)


def correct(prereg: Preregistration, frozen: FrozenInputs, reason: str) -> Preregistration:
    """A correction is a new version naming the old one; the old manifest is never edited."""
    if not reason.strip():
        raise ContractError(f"correcting {prereg.challenge} v{prereg.version} needs a reason; none was given")
    return Preregistration(
        challenge=prereg.challenge,
        version=prereg.version + 1,
        frozen=frozen,
        supersedes=prereg.digest,
        correction=reason,
    )


def supersede(
    old: Preregistration, records: Mapping[Digest, PairedAttempt], corrected: Preregistration
) -> list[AdmissionDecision]:
    """Exclude every run made under ``old`` because ``corrected`` replaced it; the runs themselves stay whole."""
    if corrected.supersedes != old.digest:
        raise ContractError(
            f"{corrected.challenge} v{corrected.version} supersedes {corrected.supersedes}, not v{old.version} "
            f"({old.digest})"
        )
    note = f"superseded by v{corrected.version}: {corrected.correction}"
    return [
        decide(digest, attempt, ReasonCode.SUPERSEDED_BY_CORRECTION, note)
        for digest, attempt in sorted(records.items())
        if attempt.key.manifest == old.digest
    ]


def load_preregistrations(directory: Path) -> dict[str, list[Preregistration]]:
    """Read ``<directory>/<challenge>/v<N>.json``; versions must run 1..N, each superseding the previous."""
    found: dict[str, list[Preregistration]] = {}
    for path in sorted(directory.glob("*/v*.json")):
        prereg = read_contract(path, Preregistration, "the preregistration")
        if path.parent.name != prereg.challenge or path.name != f"v{prereg.version}.json":
            raise ContractError(
                f"{path} holds {prereg.challenge} v{prereg.version}; "
                f"store it as {prereg.challenge}/v{prereg.version}.json"
            )
        found.setdefault(prereg.challenge, []).append(prereg)
    for challenge, versions in found.items():
        versions.sort(key=lambda p: p.version)
        _check_chain(challenge, versions)
    return found


def _check_chain(challenge: str, versions: Iterable[Preregistration]) -> None:
    previous: Preregistration | None = None
    for expected, prereg in enumerate(versions, start=1):
        if prereg.version != expected:
            raise ContractError(f"{challenge}: expected version {expected}, found v{prereg.version}; versions run 1..N")
        if previous is not None and prereg.supersedes != previous.digest:
            raise ContractError(
                f"{challenge} v{prereg.version} supersedes {prereg.supersedes}, but v{previous.version} is "
                f"{previous.digest}"
            )
        previous = prereg


# What `stele-bench schema` exports (listed in bench.contracts.registry by the lead).
PUBLIC_CONTRACTS = (Preregistration,)
