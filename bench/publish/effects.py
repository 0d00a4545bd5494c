"""The report's answer, said first: per memory system, the pooled effect with its exact interval and p-value.

One row per comparison of the summary (each system against the shared control, then each against the static
baseline), in a stable order: the kind of comparison, then the system's name. The effect is the difference in pass
rate over the admitted pairs, in points: (pairs passing only with the system - pairs passing only with what it is
compared with) / pairs. The pooled test is the exact stratified one (:mod:`bench.analysis.stratified`): given each
challenge's discordant pairs, the count favouring the system is binomial, so its exact (Clopper-Pearson) interval on
the share of discordant pairs favouring the system is the exact interval of the effect at the observed number of
discordant pairs, drawn as a difference; the conditional odds ratio's exact interval is the same interval on another
scale. With no discordant pair there is no interval to draw.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from html import escape

from ..analysis import Comparison, ComparisonKind, DesignPower, Interval, PowerStatement, StatisticsSummary
from .svg import EffectMark, effect_plot
from .tables import table

__all__ = ["Effect", "effects", "effects_section", "power_text"]

EXPLORATORY = 5  # fewer admitted pairs than this: the comparison is exploratory


@dataclass(frozen=True)
class Effect:
    """One comparison, pooled over its challenges, in the words and numbers the report's first screen gives."""

    system: str  # the compared memory system's build label
    against: str  # what it is compared with, in plain words: "the control" or the baseline's build label
    pairs: int
    passes: int  # pairs whose system arm passed
    compared_passes: int  # pairs whose other arm passed
    better: int  # pairs that passed only with the system
    worse: int  # pairs that passed only with what it is compared with
    p_value: float
    share: Interval  # exact interval of better / (better + worse)
    odds_ratio: Interval
    power: PowerStatement
    challenges: tuple[str, ...]
    scope: str = ""  # which challenges, when two comparisons of one system would otherwise read the same

    @classmethod
    def of(cls, comparison: Comparison) -> Effect:
        pooled = comparison.pooled
        both = sum(stratum.paired.both_pass for stratum in comparison.strata)
        against = "the control" if comparison.kind is ComparisonKind.VERSUS_CONTROL else comparison.reference
        return cls(
            system=comparison.treatment.label,
            against=against,
            pairs=pooled.pairs,
            passes=both + pooled.treatment_only,
            compared_passes=both + pooled.reference_only,
            better=pooled.treatment_only,
            worse=pooled.reference_only,
            p_value=pooled.p_value,
            share=pooled.discordant_share,
            odds_ratio=pooled.odds_ratio,
            power=pooled.power,
            challenges=tuple(stratum.challenge for stratum in comparison.strata),
        )

    @property
    def difference(self) -> float:
        return (self.better - self.worse) / self.pairs if self.pairs else 0.0

    @property
    def interval(self) -> tuple[float, float] | None:
        """The share's exact interval as a difference in pass rate, at the observed discordant pairs."""
        discordant = self.better + self.worse
        if not discordant:
            return None
        high = 1.0 if self.share.high is None else self.share.high
        scale = discordant / self.pairs
        return scale * (2 * self.share.low - 1), scale * (2 * high - 1)

    @property
    def label(self) -> str:
        return f"{self.system} vs {self.against}{self.scope}"


def effects(summary: StatisticsSummary) -> list[Effect]:
    """Every comparison's effect: against the control first, then against the baseline, each by system name."""
    order = {ComparisonKind.VERSUS_CONTROL: 0, ComparisonKind.VERSUS_BASELINE: 1}
    ranked = sorted(summary.comparisons, key=lambda c: (order[c.kind], c.treatment.label, c.treatment.sequence))
    found = [Effect.of(comparison) for comparison in ranked]
    seen = Counter(effect.label for effect in found)
    return [replace(e, scope=f" on {', '.join(e.challenges)}") if seen[e.label] > 1 else e for e in found]


def points(value: float) -> str:
    return f"{value * 100:+.0f}"


def _effect_text(effect: Effect) -> str:
    interval = effect.interval
    shown = "no pair differed" if interval is None else f"{points(interval[0])} to {points(interval[1])}"
    return f"{points(effect.difference)} points ({shown})"


def _effect_cell(effect: Effect) -> str:
    return f"<strong>{_effect_text(effect)}</strong>"


def _ratio(interval: Interval) -> str:
    high = "&#8734;" if interval.high is None else f"{interval.high:.3g}"
    return f"{interval.low:.3g} to {high}"


def power_text(power: PowerStatement) -> str:
    """What the result says beside what the design could detect, as one sentence: a null is never "no
    difference" when nothing was detectable."""

    def design(which: str, at: DesignPower) -> str:
        effect = at.minimum_detectable_effect
        found = "nothing" if effect is None else f"a difference of {effect * 100:.0f} points or more"
        return f"{found} with the {at.pairs} {which} pairs"

    planned = [] if power.planned is None else [design("planned", power.planned)]
    parts = [*planned, design("admitted", power.admitted)]
    if power.significant:
        verdict = f"Detected at alpha {power.alpha}."
    elif power.admitted.minimum_detectable_effect is None:
        verdict = "<strong>Underpowered</strong>: these pairs could detect no difference."
    elif power.underpowered:
        verdict = "<strong>Underpowered</strong>: fewer pairs were admitted than planned."
    else:
        verdict = "No difference detected."
    return f"{verdict} At power {power.target_power} the design detects {'; '.join(parts)}."


def effects_section(summary: StatisticsSummary) -> str:
    """The first screen's table and chart, or why there is nothing to show."""
    found = effects(summary)
    if not found:
        return '<p class="answer">No comparison: no admitted pair (the admissions below say why).</p>'
    rows = []
    for effect in found:
        flag = f" Exploratory: fewer than {EXPLORATORY} pairs." if effect.pairs < EXPLORATORY else ""
        rows.append(
            [
                f"<strong>{escape(effect.system)}</strong>{escape(effect.scope)}",
                escape(effect.against),
                str(effect.pairs),
                f"{effect.passes} / {effect.compared_passes}",
                f"{effect.better} / {effect.worse}",
                _effect_cell(effect),
                f"{effect.p_value:.3g}",
                _ratio(effect.odds_ratio),
                power_text(effect.power) + flag,
            ]
        )
    level = escape(summary.confidence)
    header = ["memory system", "compared with", "pairs", "passed: system / other", "passed only with: system / other",
              f"effect on pass rate ({level} interval)", "exact p", "conditional odds ratio", "reading"]  # fmt: skip
    caption = "Pooled effect per memory system, over every challenge (exact stratified test)"
    marks = [
        EffectMark(effect.label, f"{_effect_text(effect)}, p {effect.p_value:.3g}", effect.difference, effect.interval)
        for effect in found
    ]
    chart = effect_plot(marks, f"effect on pass rate, points, with exact {summary.confidence} intervals")
    note = (
        '<p class="note">Effect: the difference in pass rate over the admitted pairs, in points. Its interval is the '
        f"exact {level} (Clopper-Pearson) interval of the share of differing pairs that favour the system, at the "
        "observed number of differing pairs; the same interval on the odds-ratio scale is the conditional odds "
        "ratio's. p: the exact test stratified by challenge.</p>"
    )
    figure = f'<figure id="effect-chart">{chart}<figcaption>Effect per memory system, in points</figcaption></figure>'
    return figure + table(header, rows, caption) + note  # the chart first: on a phone it fits the first screen
