"""Comparisons across challenges: each condition against the shared control, each memory system against the
static-context baseline; per challenge with the exact McNemar test and pooled with the exact stratified test.

A comparison is one question asked of several challenges: the same compared condition (its treatment condition and
build), the same reference, the same model and gateway mode. Its strata are the challenges (one comparability key
each); the pooled effect conditions on each stratum's discordant pairs (:mod:`.stratified`), so a challenge's own
difficulty never leaks into it, and each challenge's direction is reported beside it.

Against the control, a stratum's pairs are the attempts' (control arm, treatment arm). Against the baseline, they
are the (baseline arm, system arm) of the same attempt: both treatments ran beside one shared control from one
start, so they are matched exactly as a treatment and its control are. A record of a system and one of the baseline
belong to the same attempt when their keys agree in everything but the treatment condition, and their attempt number
and build sequence agree; they must then report the same control arm, or the summary refuses them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction

from ..contracts import ContractModel, Digest, DigestValue
from ..errors import ContractError
from ..gateway import Mode
from .attempt_record import ArmResult, Build, ComparabilityKey, PairedAttempt, condition_system
from .paired import Interval, PairedBinary, PowerStatement, paired_binary, power_statement
from .prereg import AnalysisPlan, Preregistration
from .stratified import stratified_exact

__all__ = [
    "Comparison",
    "ComparisonKind",
    "Plans",
    "PooledEffect",
    "Stratum",
    "baseline_comparisons",
    "control_comparisons",
]


class ComparisonKind(StrEnum):
    VERSUS_CONTROL = "versus-control"  # a condition against the shared control arm
    VERSUS_BASELINE = "versus-baseline"  # a memory system against the static-context baseline, attempt by attempt


class Stratum(ContractModel):
    challenge: str
    key_id: DigestValue  # the compared condition's comparability key in this challenge
    attempts: list[int]
    paired: PairedBinary
    power: PowerStatement


class PooledEffect(ContractModel):
    """The common effect over the strata: exact conditional test, interval and estimate of a common odds ratio."""

    pairs: int
    treatment_only: int
    reference_only: int
    p_value: float
    discordant_share: Interval
    odds_ratio: Interval
    odds_ratio_estimate: float | None  # B / C; None when no pair favoured the reference (unbounded)
    challenges_favouring_treatment: int
    challenges_favouring_reference: int
    challenges_favouring_neither: int
    across_challenges_p: float | None  # exact sign test over the challenges' directions; None below five directed
    power: PowerStatement


class Comparison(ContractModel):
    kind: ComparisonKind
    treatment: Build  # the compared condition: a memory system's build
    treatment_condition: str
    reference: str  # the control condition's name, or the baseline's build label
    model: str
    gateway_mode: Mode
    distractors: int  # the distractor pool size every stratum ran with
    strata: list[Stratum]
    pooled: PooledEffect


@dataclass(frozen=True)
class Plans:
    """What the preregistrations planned, by their digest (the comparability key's ``manifest``).

    None when no preregistrations were given (a library caller): nothing is then said about planned power, and the
    target power is the analysis plan's default. Given, every record's preregistration must be among them.
    """

    by_digest: Mapping[Digest, Preregistration] | None

    @classmethod
    def of(cls, preregistrations: Iterable[Preregistration] | None) -> Plans:
        return cls(None if preregistrations is None else {p.digest: p for p in preregistrations})

    def check(self, records: Mapping[Digest, PairedAttempt]) -> None:
        if self.by_digest is None:
            return
        for digest, record in sorted(records.items()):
            if record.key.manifest not in self.by_digest:
                raise ContractError(
                    f"record {digest} ({record.key.challenge}) was run under preregistration {record.key.manifest}, "
                    "which is not among the preregistrations given; publish it beside the records",
                    field="manifest",
                    actual=str(record.key.manifest),
                )

    def _analyses(self, keys: Iterable[ComparabilityKey]) -> list[AnalysisPlan]:
        if self.by_digest is None:
            return []
        return [self.by_digest[key.manifest].frozen.analysis for key in keys]

    def target_power(self, keys: Sequence[ComparabilityKey]) -> str:
        targets = sorted({analysis.power for analysis in self._analyses(keys)})
        if len(targets) > 1:
            raise ContractError(
                f"the challenges {sorted({k.challenge for k in keys})} preregistered different target powers "
                f"{targets}; one comparison needs one"
            )
        return targets[0] if targets else str(AnalysisPlan.model_fields["power"].get_default())

    def planned_pairs(self, keys: Sequence[ComparabilityKey]) -> int | None:
        if self.by_digest is None:
            return None
        return sum(self.by_digest[key.manifest].frozen.budget.attempts for key in keys)

    def baseline(self) -> str | None:
        """The baseline every preregistration names; refused when they disagree (one naming none included)."""
        named = {p.frozen.analysis.baseline for p in (self.by_digest or {}).values()}
        if len(named) > 1:
            shown = sorted(str(name) for name in named)
            raise ContractError(f"the preregistrations name different baselines {shown}; one suite has one baseline")
        return next(iter(named), None)


# (reference arm, compared arm) of each attempt of one stratum, under the compared condition's key.
Matched = tuple[ComparabilityKey, list[tuple[int, ArmResult, ArmResult]]]


def _stratum(matched: Matched, plans: Plans, confidence: Fraction) -> Stratum:
    key, attempts = matched
    paired = paired_binary([(reference, compared) for _, reference, compared in attempts], confidence)
    p_value = Fraction(paired.mcnemar_p)
    return Stratum(
        challenge=key.challenge,
        key_id=key.key_id,
        attempts=[number for number, _, _ in attempts],
        paired=paired,
        power=power_statement(
            p_value, len(attempts), plans.planned_pairs([key]), confidence, plans.target_power([key])
        ),
    )


def _pooled(strata: Sequence[Matched], built: Sequence[Stratum], plans: Plans, confidence: Fraction) -> PooledEffect:
    test = stratified_exact([(s.paired.treatment_only, s.paired.control_only) for s in built], confidence)
    keys = [key for key, _ in strata]
    pairs = sum(len(attempts) for _, attempts in strata)
    across = test.directions.sign_test_p
    return PooledEffect(
        pairs=pairs,
        treatment_only=test.treatment_only,
        reference_only=test.reference_only,
        p_value=float(test.p_value),
        discordant_share=Interval(low=test.share[0], high=test.share[1]),
        odds_ratio=Interval(low=test.odds_ratio[0], high=test.odds_ratio[1]),
        odds_ratio_estimate=None if test.estimate is None else float(test.estimate),
        challenges_favouring_treatment=test.directions.treatment,
        challenges_favouring_reference=test.directions.reference,
        challenges_favouring_neither=test.directions.neither,
        across_challenges_p=None if across is None else float(across),
        power=power_statement(test.p_value, pairs, plans.planned_pairs(keys), confidence, plans.target_power(keys)),
    )


def _comparison(
    kind: ComparisonKind, build: Build, reference: str, strata: list[Matched], plans: Plans, confidence: Fraction
) -> Comparison:
    strata = sorted(strata, key=lambda matched: (matched[0].challenge, str(matched[0].key_id)))
    built = [_stratum(matched, plans, confidence) for matched in strata]
    first = strata[0][0]
    return Comparison(
        kind=kind,
        treatment=build,
        treatment_condition=first.treatment_condition,
        reference=reference,
        model=first.model,
        gateway_mode=first.gateway_mode,
        distractors=first.distractors,
        strata=built,
        pooled=_pooled(strata, built, plans, confidence),
    )


def _question(key: ComparabilityKey, build: Build) -> tuple[str, ...]:
    """What one comparison's strata share: everything but the challenge's own question and the build's label."""
    fields = (key.treatment_condition, key.control_condition, key.model, key.gateway_mode.value, str(key.fixture))
    return (*fields, key.source_commit, str(key.distractors), build.label, str(build.sequence))


def control_comparisons(
    cells: Sequence[Sequence[PairedAttempt]], plans: Plans, confidence: Fraction
) -> list[Comparison]:
    """Each condition against the shared control, over the challenges it ran (one stratum per cell)."""
    groups: dict[tuple[str, ...], list[Matched]] = {}
    for attempts in cells:
        first = attempts[0]
        matched = [(a.attempt, a.control, a.treatment) for a in attempts if a.control and a.treatment]
        groups.setdefault(_question(first.key, first.build), []).append((first.key, matched))
    return [
        _comparison(
            ComparisonKind.VERSUS_CONTROL,
            Build(label=question[-2], sequence=int(question[-1])),
            strata[0][0].control_condition,
            strata,
            plans,
            confidence,
        )
        for question, strata in sorted(groups.items())
    ]


def _attempt_of(record: PairedAttempt) -> tuple[str, ...]:
    """The attempt a record belongs to: its key without the treatment condition, its number and build sequence."""
    key = record.key
    return (
        *(key.challenge, str(key.fixture), key.model, key.gateway_mode.value, str(key.policy)),
        *(key.control_condition, str(key.manifest), str(key.verifier), key.source_commit, str(key.distractors)),
        *(str(record.build.sequence), str(record.attempt)),
    )


def baseline_comparisons(
    records: Mapping[Digest, PairedAttempt], baseline: str, plans: Plans, confidence: Fraction
) -> list[Comparison]:
    """Each memory system against ``baseline``'s arm of the same attempts; nothing when the baseline never ran."""
    anchors = {
        _attempt_of(r): (d, r) for d, r in records.items() if condition_system(r.key.treatment_condition) == baseline
    }
    groups: dict[tuple[str, ...], dict[Digest, Matched]] = {}
    labels: dict[tuple[str, ...], str] = {}
    for digest, record in sorted(records.items()):
        anchor = anchors.get(_attempt_of(record))
        if anchor is None or condition_system(record.key.treatment_condition) == baseline:
            continue
        anchor_digest, paired_with = anchor
        if record.control != paired_with.control:
            raise ContractError(
                f"records {digest} and {anchor_digest} are attempt {record.attempt} of {record.key.challenge} but "
                "report different control arms; one attempt has one shared control"
            )
        if paired_with.treatment is None or record.treatment is None:
            continue
        question = _question(record.key, record.build)
        labels[question] = paired_with.build.label
        stratum = groups.setdefault(question, {}).setdefault(record.key.key_id, (record.key, []))
        stratum[1].append((record.attempt, paired_with.treatment, record.treatment))
    comparisons = []
    for question, strata in sorted(groups.items()):
        matched = [(key, sorted(attempts, key=lambda item: item[0])) for key, attempts in strata.values()]
        build = Build(label=question[-2], sequence=int(question[-1]))
        comparisons.append(
            _comparison(ComparisonKind.VERSUS_BASELINE, build, labels[question], matched, plans, confidence)
        )
    return comparisons
