"""The static HTML report: one self-contained file that opens from disk (inline CSS and SVG, no scripts).

It says at its top how the model was reached: in policy mode, that the model was a deterministic stand-in (and
which policies it answered from). It shows per-challenge paired outcomes with their exact intervals, each memory
system beside the others (a row per system against the shared control), the three grading layers with delivery per
channel (hooks, and the memory system's own tools), the admission decisions and one trend plot per comparability
key. It contains no timestamps and iterates only in sorted
order, so the same inputs always give byte-identical HTML.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from html import escape

from ..analysis import (
    Admission,
    AdmissionDecision,
    Cell,
    Comparison,
    ComparisonKind,
    ContinuousStatus,
    ContinuousSummary,
    Interval,
    PairedAttempt,
    PowerStatement,
    StatisticsSummary,
)
from ..contracts import Digest, PortablePath
from ..errors import ContractError
from ..gateway.config import Mode
from .bundle import ATTEMPT_PAGES
from .headline import headlines, report_title
from .html_table import table as _table
from .noise import noise_section
from .svg import CONTROL_COLOUR, TREATMENT_COLOUR, TrendLine, interval_plot, layer_bars, trend_plot

__all__ = ["render_report"]

_STYLE = """
body{font-family:sans-serif;margin:24px;color:#222;background:#fff;max-width:1100px}
@media (max-width:600px){body{margin:8px}}
.scroll{overflow-x:auto;max-width:100%}svg{max-width:100%;height:auto;background:#fff}
caption{text-align:left;font-size:12px;color:#555;padding:2px 0}
figure{margin:8px 0}p,h1,h3,li{overflow-wrap:anywhere}
.headline{font-size:15px}.headline li{margin:2px 0}
@media (prefers-color-scheme:dark){body{background:#111;color:#eee}th{background:#333}.note,caption{color:#bbb}
a{color:#8cf}.control{color:#f0a060}.treatment{color:#8cb8f0}.excluded{background:#3a2222}
.admitted{background:#223a22}.stand-in{background:#3a3218;border-color:#806a20}}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}
h3{font-size:14px;margin-bottom:4px}
table{border-collapse:collapse;font-size:12px;margin:8px 0}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:left}th{background:#f2f2f2}
.control{color:#b35806}.treatment{color:#1f5fa6}.excluded{background:#fbeaea}.admitted{background:#eaf6ea}
code{font-size:11px}.note{font-size:12px;color:#555}
.stand-in{font-size:14px;background:#fff4d6;border:1px solid #e0c060;padding:8px}
"""


def _interval(interval: Interval, digits: int = 3) -> str:
    high = "&#8734;" if interval.high is None else f"{interval.high:.{digits}f}"
    return f"[{interval.low:.{digits}f}, {high}]"


def _cell_title(cell: Cell) -> str:
    return f"{cell.key.challenge}: {cell.build.label}"


def _outcomes(summary: StatisticsSummary) -> str:
    header = ["challenge", "memory system", "pairs", "control pass", "treatment pass", "T only / C only",
              "McNemar p", "discordant share", "conditional odds ratio"]  # fmt: skip
    rows = [
        [
            escape(c.key.challenge),
            escape(c.build.label),
            str(len(c.attempts)),
            f"{c.control.passes}/{c.control.attempts} {_interval(c.control.pass_rate)}",
            f"{c.treatment.passes}/{c.treatment.attempts} {_interval(c.treatment.pass_rate)}",
            f"{c.paired.treatment_only} / {c.paired.control_only}",
            f"{c.paired.mcnemar_p:.4g}" + (" (exploratory: fewer than 5 pairs)" if len(c.attempts) < 5 else ""),
            _interval(c.paired.discordant_share),
            _interval(c.paired.odds_ratio, 2),
        ]
        for c in summary.cells
    ]
    plot_rows = []
    for c in summary.cells:
        for arm, colour, s in (("control", CONTROL_COLOUR, c.control), ("treatment", TREATMENT_COLOUR, c.treatment)):
            high = 1.0 if s.pass_rate.high is None else s.pass_rate.high
            plot_rows.append((f"{_cell_title(c)} {arm}", s.pass_rate.low, high, s.passes / s.attempts, colour))
    plot = interval_plot(plot_rows, f"pass rates with exact {summary.confidence} intervals")
    table = _table(header, rows, "Paired outcomes per challenge and memory system, against the shared control")
    return table + f'<figure id="outcome-intervals">{plot}</figure>'


def _layers(summary: StatisticsSummary) -> str:
    parts = []
    for c in summary.cells:
        rows = []
        for arm, colour, s in (("control", CONTROL_COLOUR, c.control), ("treatment", TREATMENT_COLOUR, c.treatment)):
            rows.append((f"{arm} delivered", s.delivered, s.attempts, colour))
            rows += [(f"{arm} · via {channel}", n, s.attempts, colour) for channel, n in s.delivered_via.items()]
            rows += [(f"{arm} used", s.used, s.attempts, colour), (f"{arm} outcome", s.passes, s.attempts, colour)]
        counts = [[escape(label), f"{n} of {total}"] for label, n, total, _ in rows]
        chart = layer_bars(rows, f"grading layers, {_cell_title(c)}")
        table = _table(["layer", "arms"], counts, f"Grading layers, {_cell_title(c)}")
        parts.append(f"<h3>{escape(_cell_title(c))}</h3>{chart}{table}")
    return "".join(parts)


def _effect(effect: float | None) -> str:
    return "none detectable" if effect is None else f"{effect:.3f}"


def _power_text(power: PowerStatement) -> str:
    """The result's reading beside what the design could detect: a null never passes for "no difference"."""
    planned = "" if power.planned is None else f"planned {_effect(power.planned.minimum_detectable_effect)} at "
    planned += "" if power.planned is None else f"{power.planned.pairs} pairs; "
    design = f"{planned}admitted {_effect(power.admitted.minimum_detectable_effect)} at {power.admitted.pairs} pairs"
    if power.significant:
        verdict = f"detected at alpha {power.alpha}"
    elif power.admitted.minimum_detectable_effect is None:
        verdict = "<strong>underpowered</strong>: no effect was detectable at these pairs"
    elif power.underpowered:
        verdict = "<strong>underpowered</strong>: fewer pairs admitted than planned"
    else:
        verdict = "no difference detected"
    return f"{verdict} ({design}; minimum detectable effect at power {power.target_power})"


def _comparison(comparison: Comparison) -> str:
    against = "the shared control" if comparison.kind is ComparisonKind.VERSUS_CONTROL else "the static baseline"
    title = f"{comparison.treatment.label} against {against} ({comparison.reference})"
    rows = [
        [escape(s.challenge), str(len(s.attempts)), f"{s.paired.treatment_only} / {s.paired.control_only}",
         f"{s.paired.mcnemar_p:.4g}", _interval(s.paired.odds_ratio, 2), "", _power_text(s.power)]
        for s in comparison.strata
    ]  # fmt: skip
    pooled = comparison.pooled
    estimate = "&#8734;" if pooled.odds_ratio_estimate is None else f"{pooled.odds_ratio_estimate:.3g}"
    across = "exploratory" if pooled.across_challenges_p is None else f"sign test p {pooled.across_challenges_p:.4g}"
    directions = (
        f"{pooled.challenges_favouring_treatment} favour {escape(comparison.treatment.label)}, "
        f"{pooled.challenges_favouring_reference} the reference, {pooled.challenges_favouring_neither} neither "
        f"({across})"
    )
    rows.append(
        ["<strong>pooled (stratified exact)</strong>", str(pooled.pairs),
         f"{pooled.treatment_only} / {pooled.reference_only}", f"{pooled.p_value:.4g}",
         f"{_interval(pooled.odds_ratio, 2)} estimate {estimate}", directions, _power_text(pooled.power)]
    )  # fmt: skip
    header = ["challenge", "pairs", "T only / R only", "exact p", "conditional odds ratio", "challenges",
              "power"]  # fmt: skip
    return f"<h3>{escape(title)}</h3>" + _table(header, rows, f"{escape(title)}: per challenge and pooled")


def _comparisons(summary: StatisticsSummary) -> str:
    if not summary.comparisons:
        return '<p class="note">No comparison: no admitted pair.</p>'
    baseline = (
        "No preregistration names a static baseline."
        if summary.baseline is None
        else f"Each memory system is also compared with the static baseline {escape(summary.baseline)}, attempt by "
        "attempt."
    )
    note = (
        '<p class="note">Per challenge: exact McNemar. Pooled: the exact conditional test of a common odds ratio '
        "over the challenges as strata, with its exact interval. Beside each, the minimum detectable effect (the "
        "smallest difference in pass rates detected with the target power when no pair favours the reference) at "
        f"the preregistered and at the admitted pairs. {baseline}</p>"
    )
    return note + "".join(_comparison(c) for c in summary.comparisons)


def _continuous_text(measure: ContinuousSummary) -> str:
    if measure.status is ContinuousStatus.NOT_TESTED:
        return "not tested (policy mode: the stand-in model's tokens are estimates and it spends nothing)"
    if measure.status is ContinuousStatus.EXPLORATORY:
        return (
            f"exploratory ({measure.nonzero_pairs} non-zero differences, {measure.zero_pairs} zero: fewer than 5 "
            "non-zero, no test computed)"
        )
    return (
        f"median difference {measure.median_difference:.4g}; sign test p {measure.sign_test_p:.4g}; "
        f"signed-rank p {measure.signed_rank_p:.4g} ({measure.nonzero_pairs} non-zero pairs)"
    )


def _continuous(summary: StatisticsSummary) -> str:
    rows = [
        [escape(c.key.challenge), escape(c.build.label)]
        + [_continuous_text(measure) for measure in (c.tokens, c.dollars, c.wall_seconds)]
        for c in summary.cells
    ]
    header = ["challenge", "memory system", "tokens (treatment - control)", "USD (treatment - control)",
              "wall seconds (treatment - control)"]  # fmt: skip
    return _table(header, rows, "Continuous measures, treatment minus control")


def _model_note(summary: StatisticsSummary) -> str:
    """How the model was reached, said first: a stand-in must never pass for a model."""
    modes = {cell.key.gateway_mode for cell in summary.cells}
    models = ", ".join(sorted({escape(cell.key.model) for cell in summary.cells})) or "none"
    if Mode.POLICY in modes:
        policies = sorted({cell.key.policy.short for cell in summary.cells if cell.key.policy is not None})
        return (
            '<p class="stand-in"><strong>The model was a deterministic stand-in.</strong> Every answer came from a '
            f"digest-pinned policy that reads the request (gateway mode policy; {len(policies)} policies: "
            f"{', '.join(f'<code>{p}</code>' for p in policies)}), not from {models}. Token counts are estimates "
            "and are not tested; nothing was spent.</p>"
        )
    return f'<p class="note">Model: {models}, reached through the gateway in forward mode; metered per arm.</p>'


def _page_link(record: PairedAttempt, pages: Collection[str]) -> str:
    """The record's attempt page, when the report was given one (a bundle assembled by hand has none)."""
    # A suite run at several pool sizes names each size's pages (bench.run.plan's _Variant).
    pooled = f"{record.key.challenge}-pool{record.key.distractors}-{record.attempt}"
    label = pooled if pooled in pages else f"{record.key.challenge}-{record.attempt}"
    if label not in pages:
        return ""
    return f'<a href="{ATTEMPT_PAGES.removeprefix("report/")}/{escape(label)}.html">transcripts</a>'


def _admissions(
    records: Mapping[Digest, tuple[PortablePath, PairedAttempt]],
    admissions: Mapping[PortablePath, AdmissionDecision],
    pages: Collection[str],
) -> str:
    entries = []
    for decision_path, decision in admissions.items():
        if decision.record not in records:
            raise ContractError(f"{decision_path} decides about record {decision.record}, which is not in the bundle")
        path, record = records[decision.record]
        entries.append((record.key.challenge, record.build.sequence, record.attempt, path, record, decision))
    entries.sort(key=lambda e: (e[0], e[1], e[2], e[3]))
    rows = [
        [escape(challenge), escape(record.build.label), str(attempt), record.completion.value,
         decision.decision.value, decision.reason.value, escape(decision.note),
         f'<a href="../{escape(path)}"><code>{escape(path)}</code></a>', _page_link(record, pages)]
        for challenge, _, attempt, path, record, decision in entries
    ]  # fmt: skip
    header = ["challenge", "build", "attempt", "completion", "decision", "reason", "note", "record", "transcripts"]
    caption = "Every record, admitted or excluded, with the reason"
    return _table(header, rows, caption, [e[5].decision.value for e in entries])


def _trends(summary: StatisticsSummary) -> str:
    by_key: dict[Digest, list[Cell]] = {}
    for cell in summary.cells:
        by_key.setdefault(cell.key_id, []).append(cell)
    parts = []
    for key_id in sorted(by_key, key=lambda k: (by_key[k][0].key.challenge, k)):
        line = TrendLine.of(by_key[key_id])
        key = line.cells[0].key
        fields = ", ".join(f"{name} <code>{escape(str(value))}</code>" for name, value in key.model_dump().items())
        parts.append(
            f'<h3>{escape(key.challenge)} <code>{key_id.short}</code></h3><p class="note">{fields}</p>'
            f'<figure class="trend">{trend_plot(line)}</figure>'
        )
    return "".join(parts)


def render_report(
    summary: StatisticsSummary,
    records: Mapping[Digest, tuple[PortablePath, PairedAttempt]],
    admissions: Mapping[PortablePath, AdmissionDecision],
    pages: Collection[str] = frozenset(),
    suite: str = "",
) -> str:
    """The report of ``suite``; ``pages`` names the attempts (``<challenge>-<attempt>``) with a transcript page."""
    admitted = sum(d.decision is Admission.ADMITTED for d in admissions.values())
    sections = [
        ("outcomes", "Per-challenge paired outcomes", _outcomes(summary)),
        ("comparisons", "Effects across challenges, with the power to find them", _comparisons(summary)),
        ("layers", "Grading layers: delivered, used, outcome", _layers(summary)),
        ("continuous", "Continuous measures", _continuous(summary)),
        ("noise", "Memory under noise: effect per pool size, cost per pass, retrieval", noise_section(summary)),
        ("admissions", "Admission decisions", _admissions(records, admissions, pages)),
        ("trends", "Trends per comparability key across builds", _trends(summary)),
    ]
    body = "".join(f'<section id="{id_}"><h2>{title}</h2>{content}</section>' for id_, title, content in sections)
    title = escape(report_title(summary, suite))
    legend = (
        f'<p class="note"><span class="control">&#9632; control</span> <span class="treatment">&#9632; treatment '
        "(each memory system against the shared control)</span>"
        f" &middot; {len(records)} records, {admitted} admitted, {len(admissions) - admitted} excluded &middot; "
        f"exact {escape(summary.confidence)} intervals (Clopper-Pearson; conditional odds ratio on discordant pairs)"
        "</p>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{_STYLE}</style></head><body><main><h1>{title}</h1>"
        f"{_model_note(summary)}{headlines(summary)}{legend}{body}</main></body></html>\n"
    )
