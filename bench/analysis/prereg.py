"""Preregistration: what a run froze before it ran, versioned, and the check that refuses a moved run.

A manifest freezes everything that decides an outcome: the whole challenge manifest (prompt, allowed outputs,
limits, prebuild, timeouts, verifier and oracle pins), the verifier's and the oracle's bytes, the model and how it
is reached (the policy in policy mode, the provider settings in forward mode), every memory system's declaration,
what grading looks for (the memory phrases and the markers of use), the fixture, the budget and the analysis plan
(confidence, tests, minimum n, and what an undelivered treatment arm means). Every part a run can observe again is
frozen field by field, by digest, so a refusal names the very field that moved (``challenge.agent_timeout_seconds``,
``model_access.policy``). The budget and the analysis plan have no other source: a run reads them from here. The
analysis plan also states the power the design promises (the minimum detectable effect at the planned attempts,
stated before any outcome exists, and the baseline every system is also compared against), and a calibration plan
says how often calibration runs the verifier on each tree.

An apparatus correction never edits a manifest: it writes version N+1 that names the old one, and the runs under
the old version are excluded (``supersede``), kept whole in the record.

On disk, ``manifests/<suite>/<challenge>/v<N>.json`` holds version N as canonical JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from ..contracts import ContractModel, Digest, DigestValue, Document, canonical_bytes, canonical_json
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
    "ObservedInputs",
    "Preregistration",
    "PreregistrationMoved",
    "StatedPower",
    "Supersession",
    "UndeliveredRule",
    "check_unmoved",
    "correct",
    "field_digests",
    "load_preregistrations",
    "moved_fields",
    "stated_power",
    "supersede",
    "supersession",
]


class Budget(ContractModel):
    """The most one run may spend. A run enforces every cap per arm; an arm stopped by one is recorded as capped."""

    attempts: Annotated[int, Field(ge=1)]
    max_usd_cents_per_pair: Annotated[int, Field(ge=0)]  # forward mode's pair cap; 0 in policy mode
    max_usd_cents_per_arm: Annotated[int, Field(ge=0)]  # forward mode's arm cap; 0 in policy mode
    max_tokens_per_arm: Annotated[int, Field(ge=1)]  # as the gateway counts them (estimated in policy mode)
    max_wall_seconds_per_arm: Annotated[int, Field(ge=1)]  # every step of the arm together


class UndeliveredRule(StrEnum):
    """What a treatment arm that delivered nothing means; the choice is made before any outcome is seen."""

    EXCLUDE = "exclude"  # the pair says nothing about memory: excluded
    OWN_ROW = "own-row"  # kept out of the main analysis, listed under its own reason code
    # Counted as an ordinary result: where memory is expected not to arrive or not to matter (a low-memory
    # control), an undelivered treatment is the null the challenge exists to show.
    INCLUDE = "include"


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
    undelivered_treatment: UndeliveredRule = UndeliveredRule.EXCLUDE
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


FieldDigests = Annotated[dict[str, DigestValue], Field(min_length=1)]  # fingerprints, never stored


class ObservedInputs(ContractModel):
    """What a run observes again from the suite's files before it starts, every part field by field."""

    challenge: FieldDigests  # every field of the challenge manifest, flattened (``environment.cpus``)
    verifier: DigestValue  # the verifier's bytes
    oracle: DigestValue | None  # the oracle's bytes; None when the challenge has none
    model: Annotated[str, Field(min_length=1)]
    models: dict[str, Annotated[str, Field(min_length=1)]] = Field(default_factory=dict)  # other harnesses' models
    model_access: FieldDigests  # ``gateway_mode`` and the policy's bytes, or every field of the forward settings
    memory_systems: FieldDigests  # name -> digest of its declaration
    grading: FieldDigests  # ``phrases``, ``anchored_paths``, ``identifiers``: what grading looks for
    fixture: (
        DigestValue  # the fixture manifest, the graph arm restored, the pool sizes run and the oracle scored against
    )

    @model_serializer(mode="wrap")
    def _without_unused(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Left out while empty: a preregistration frozen before suites named models per harness keeps its digest."""
        dumped: dict[str, Any] = handler(self)
        if not dumped.get("models"):
            dumped.pop("models", None)
        return dumped


class FrozenInputs(ObservedInputs):
    """The observed inputs, and what a run can only read from here: the budget and the analysis plan."""

    budget: Budget
    analysis: AnalysisPlan
    calibration: CalibrationPlan = Field(default_factory=CalibrationPlan)


def field_digests(value: Any, prefix: str = "") -> dict[str, DigestValue]:
    """One digest per field of a JSON value, by dotted path; a list is one field (its order is part of it)."""
    if isinstance(value, dict) and value:
        flat: dict[str, DigestValue] = {}
        for key in sorted(value):
            flat.update(field_digests(value[key], f"{prefix}.{key}" if prefix else key))
        return flat
    return {prefix: DigestValue.of(canonical_json(value))}


class Preregistration(Document):
    kind: Literal["preregistration"] = "preregistration"
    schema_version: Literal[2] = 2
    challenge: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
    version: Annotated[int, Field(ge=1)]
    frozen: FrozenInputs
    supersedes: DigestValue | None = None
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
    def digest(self) -> DigestValue:
        return DigestValue.of(canonical_bytes(self))


@dataclass(frozen=True)
class Moved:
    field: str
    frozen: Any
    observed: Any


class PreregistrationMoved(ContractError):
    """A run was about to start with inputs that differ from what its preregistration froze."""

    def __init__(self, challenge: str, version: int, moved: tuple[Moved, ...], command: str | None = None) -> None:
        lines = "; ".join(f"{m.field}: frozen {_shown(m.frozen)}, now {_shown(m.observed)}" for m in moved)
        fields = ", ".join(m.field for m in moved)
        how = command or f"stele-bench prereg correct SUITE {challenge} --reason WHY"
        super().__init__(
            f"refusing to start {challenge} v{version}: {len(moved)} frozen input(s) moved ({fields}): {lines}; "
            f"restore them, or record a new version with `{how}`",
            field=moved[0].field if moved else None,
            expected=moved[0].frozen if moved else None,
            actual=moved[0].observed if moved else None,
            hint=how,
        )
        self.challenge = challenge
        self.version = version
        self.moved = moved


def _shown(value: Any) -> str:
    """A frozen value as a refusal shows it: a digest by its first hex digits, anything else as it is."""
    return f"{value.hex[:12]}..." if isinstance(value, Digest) else repr(value)


def _flatten(model: ContractModel, names: Iterable[str] | None = None) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name in type(model).model_fields if names is None else names:
        value = getattr(model, name)
        if isinstance(value, ContractModel):
            flat.update({f"{name}.{key}": inner for key, inner in _flatten(value).items()})
        elif isinstance(value, dict):
            flat.update({f"{name}.{key}": inner for key, inner in value.items()})
        else:
            flat[name] = value
    return flat


def moved_fields(frozen: ObservedInputs, observed: ObservedInputs) -> tuple[Moved, ...]:
    """Every observed field whose value differs from the frozen one (a field on one side only included)."""
    before = _flatten(frozen, ObservedInputs.model_fields)
    now = _flatten(observed, ObservedInputs.model_fields)
    return tuple(
        Moved(f, before.get(f), now.get(f)) for f in sorted(set(before) | set(now)) if before.get(f) != now.get(f)
    )


def check_unmoved(prereg: Preregistration, observed: ObservedInputs, command: str | None = None) -> None:
    """Raise ``PreregistrationMoved`` naming every frozen field whose observed value differs.

    ``command`` is the command line that records a new version, named in the refusal.
    """
    moved = moved_fields(prereg.frozen, observed)
    if moved:
        raise PreregistrationMoved(prereg.challenge, prereg.version, moved, command)


def correct(prereg: Preregistration, frozen: FrozenInputs, reason: str) -> Preregistration:
    """A correction is a new version naming the old one; the old manifest is never edited."""
    if not reason.strip():
        raise ContractError(f"correcting {prereg.challenge} v{prereg.version} needs a reason; none was given")
    if frozen == prereg.frozen:
        raise ContractError(
            f"{prereg.challenge} v{prereg.version} already freezes exactly these inputs; a new version records a change"
        )
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


class Supersession(Document):
    """The record a correction leaves about the runs it replaced: each one excluded, by record digest."""

    kind: Literal["supersession"] = "supersession"
    schema_version: Literal[1] = 1
    challenge: Annotated[str, Field(min_length=1)]
    superseded: DigestValue  # the old version's digest
    by: DigestValue  # the version that replaced it
    reason: Annotated[str, Field(max_length=4000)]
    decisions: tuple[AdmissionDecision, ...]


def supersession(
    old: Preregistration, corrected: Preregistration, records: Mapping[Digest, PairedAttempt]
) -> Supersession:
    """The record of ``corrected`` replacing ``old``: every run made under ``old`` excluded."""
    return Supersession(
        challenge=old.challenge,
        superseded=old.digest,
        by=corrected.digest,
        reason=corrected.correction or "",
        decisions=tuple(supersede(old, records, corrected)),
    )


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
PUBLIC_CONTRACTS = (Preregistration, Supersession)
