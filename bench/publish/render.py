"""The static HTML report: one self-contained file that opens from disk (inline CSS and SVG, no scripts).

It answers first: the title names what was compared; under it the harness, the model and how it was reached (in
policy mode, that the model was a deterministic stand-in); then, per memory system, the pooled effect with its exact
interval and p-value, as a table and one effect chart (:mod:`.effects`). The detail follows: per-challenge paired
outcomes, each comparison per challenge with the power to find it, the three grading layers with delivery per
channel, continuous measures, every admission decision and one trend plot per comparability key. Systems appear in
one order everywhere (by name). It contains no timestamps and iterates only in sorted order, so the same inputs
always give byte-identical HTML.
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
    StatisticsSummary,
)
from ..contracts import Digest, PortablePath
from ..errors import ContractError
from ..gateway import Mode
from .bundle_layout import ATTEMPT_PAGES
from .effects import effects_section, power_text
from .noise import noise_section
from .style import BASE_STYLE
from .svg import CONTROL_COLOUR, TREATMENT_COLOUR, TrendLine, layer_bars, trend_plot
from .tables import table
from .title import report_meta, report_title

__all__ = ["render_report"]

_STYLE = BASE_STYLE + ".answer{font-size:15px}#answer table{font-size:14px}"


def _interval(interval: Interval, digits: int = 3) -> str:
    high = "&#8734;" if interval.high is None else f"{interval.high:.{digits}f}"
    return f"[{interval.low:.{digits}f}, {high}]"


def _cell_title(cell: Cell) -> str:
    return f"{cell.key.challenge}: {cell.build.label}"


def _cells(summary: StatisticsSummary) -> list[Cell]:
    """The cells in the report's one order: by challenge, then by system name and build."""
    return sorted(summary.cells, key=lambda c: (c.key.challenge, c.build.label, c.build.sequence, str(c.key_id)))


def _outcomes(summary: StatisticsSummary) -> str:
    header = ["challenge", "memory system", "pairs", "control passed", "system passed",
              "passed only with: system / control", "McNemar p", "conditional odds ratio"]  # fmt: skip
    rows = [
        [
            escape(c.key.challenge),
            escape(c.build.label),
            str(len(c.attempts)),
            f"{c.control.passes} of {c.control.attempts} {_interval(c.control.pass_rate)}",
            f"{c.treatment.passes} of {c.treatment.attempts} {_interval(c.treatment.pass_rate)}",
            f"{c.paired.treatment_only} / {c.paired.control_only}",
            f"{c.paired.mcnemar_p:.4g}" + (" (exploratory: fewer than 5 pairs)" if len(c.attempts) < 5 else ""),
            _interval(c.paired.odds_ratio, 2),
        ]
        for c in _cells(summary)
    ]
    caption = "Paired outcomes per challenge and memory system, against the shared control (pass rates with exact "
    return table(header, rows, caption + f"{summary.confidence} intervals)")


def _layers(summary: StatisticsSummary) -> str:
    parts = []
    for c in _cells(summary):
        rows = []
        for arm, colour, s in (("control", CONTROL_COLOUR, c.control), ("system", TREATMENT_COLOUR, c.treatment)):
            rows.append((f"{arm} delivered", s.delivered, s.attempts, colour))
            rows += [(f"{arm} · via {channel}", n, s.attempts, colour) for channel, n in s.delivered_via.items()]
            rows += [(f"{arm} used", s.used, s.attempts, colour), (f"{arm} outcome", s.passes, s.attempts, colour)]
        counts = [[escape(label), f"{n} of {total}"] for label, n, total, _ in rows]
        chart = layer_bars(rows, f"grading layers, {_cell_title(c)}")
        counted = table(["layer", "arms"], counts, f"Grading layers, {_cell_title(c)}")
        parts.append(f"<h3>{escape(_cell_title(c))}</h3><figure>{chart}</figure>{counted}")
    return "".join(parts)


def _comparison(comparison: Comparison) -> str:
    system = escape(comparison.treatment.label)
    other = "the control" if comparison.kind is ComparisonKind.VERSUS_CONTROL else escape(comparison.reference)
    title = f"{system} against {other}"
    rows = [
        [escape(s.challenge), str(len(s.attempts)), f"{s.paired.treatment_only} / {s.paired.control_only}",
         f"{s.paired.mcnemar_p:.4g}", _interval(s.paired.odds_ratio, 2), "", power_text(s.power)]
        for s in comparison.strata
    ]  # fmt: skip
    pooled = comparison.pooled
    estimate = "&#8734;" if pooled.odds_ratio_estimate is None else f"{pooled.odds_ratio_estimate:.3g}"
    across = "exploratory" if pooled.across_challenges_p is None else f"sign test p {pooled.across_challenges_p:.4g}"
    directions = (
        f"{pooled.challenges_favouring_treatment} favour {system}, {pooled.challenges_favouring_reference} favour "
        f"{other}, {pooled.challenges_favouring_neither} neither ({across})"
    )
    rows.append(
        ["<strong>pooled (stratified exact)</strong>", str(pooled.pairs),
         f"{pooled.treatment_only} / {pooled.reference_only}", f"{pooled.p_value:.4g}",
         f"{_interval(pooled.odds_ratio, 2)} estimate {estimate}", directions, power_text(pooled.power)]
    )  # fmt: skip
    header = ["challenge", "pairs", f"passed only with: {system} / {other}", "exact p", "conditional odds ratio",
              "challenges", "power"]  # fmt: skip
    return f"<h3>{title}</h3>" + table(header, rows, f"{title}: per challenge and pooled")


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
        "smallest difference in pass rates detected with the target power when no pair favours the other arm) at "
        f"the preregistered and at the admitted pairs. {baseline}</p>"
    )
    order = {ComparisonKind.VERSUS_CONTROL: 0, ComparisonKind.VERSUS_BASELINE: 1}
    ranked = sorted(summary.comparisons, key=lambda c: (order[c.kind], c.treatment.label, c.treatment.sequence))
    return note + "".join(_comparison(c) for c in ranked)


def _continuous_text(measure: ContinuousSummary) -> str:
    bounded = (
        f"; {measure.bounded_arms} arm(s) whose usage was bounded, not reported, left out with their pairs"
        if measure.bounded_arms
        else ""
    )
    if measure.status is ContinuousStatus.NOT_TESTED:
        return "not tested (policy mode: the stand-in model's tokens are estimates and it spends nothing)"
    if measure.status is ContinuousStatus.EXPLORATORY:
        return (
            f"exploratory ({measure.nonzero_pairs} non-zero differences, {measure.zero_pairs} zero: fewer than 5 "
            f"non-zero, no test computed{bounded})"
        )
    return (
        f"median difference {measure.median_difference:.4g}; sign test p {measure.sign_test_p:.4g}; "
        f"signed-rank p {measure.signed_rank_p:.4g} ({measure.nonzero_pairs} non-zero pairs{bounded})"
    )


def _unobserved(records: Mapping[Digest, tuple[PortablePath, PairedAttempt]]) -> str:
    """The records whose attempt ran without a fence check it could not observe (a drain check fails open)."""
    named = sorted(
        f"{escape(record.key.challenge)} attempt {record.attempt} ({escape(record.key.treatment_condition)}): "
        f"{', '.join(record.unobserved_checks)}"
        for _, record in records.values()
        if record.unobserved_checks
    )
    if not named:
        return ""
    return f'<p class="note">Money-fence checks not observed, the pair going on without them: {"; ".join(named)}.</p>'


def _continuous(summary: StatisticsSummary) -> str:
    rows = [
        [escape(c.key.challenge), escape(c.build.label)]
        + [_continuous_text(measure) for measure in (c.tokens, c.dollars, c.wall_seconds)]
        for c in _cells(summary)
    ]
    header = ["challenge", "memory system", "tokens (system - control)", "USD (system - control)",
              "wall seconds (system - control)"]  # fmt: skip
    return table(header, rows, "Continuous measures, the system's arm minus the control's")


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
    return f'<p class="note">The model {models} was reached through the gateway in forward mode, metered per arm.</p>'


def _page_link(record: PairedAttempt, pages: Collection[str]) -> str:
    """The record's attempt page, when the report was given one (a bundle assembled by hand has none)."""
    # A suite run at several pool sizes names each size's pages (bench.run.pools.Variant).
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
    header = ["challenge", "memory system", "attempt", "completion", "decision", "reason", "note", "record",
              "transcripts"]  # fmt: skip
    caption = "Every record, admitted or excluded, with the reason"
    return table(header, rows, caption, [e[5].decision.value for e in entries])


def _exclusions(summary: StatisticsSummary) -> str:
    """Per treatment condition, how many of its pairs were excluded for each reason."""
    rows = [[escape(c.condition), c.reason.value, str(c.pairs)] for c in summary.exclusions]
    caption = "Excluded pairs per memory system and reason"
    return table(["memory system", "reason", "excluded"], rows, caption) if rows else ""


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


# What a reader re-derives from the bundle and what rests on the publisher's signature (bench/publish/verification.py).
_VERIFICATION = (
    '<p class="note"><code>stele-bench verify MANIFEST.json --trust PUBKEY</code> re-hashes every file of this '
    "bundle and re-runs from it every deterministic stage that reads documents or tree listings: grading, the records, "
    "the admissions, the statistics and this report, the transcript pages, the redaction and the mutation audits; "
    "it also re-derives each pair's spec-diff from its arms' container specs. What it cannot re-run is attested: the "
    "container runs (prebuild, calibration, the arms, the verifier runs), certification (it reads file contents) and "
    "the corpus (read from the repository at its commit). Those rest on the publisher's signature over the bundle's "
    "in-toto statement (<code>provenance.dsse.json</code>); <code>verify</code> lists both kinds, by stage.</p>"
)


def _counts(records: Mapping[Digest, object], admissions: Mapping[PortablePath, AdmissionDecision]) -> str:
    admitted = sum(d.decision is Admission.ADMITTED for d in admissions.values())
    return (
        f'<p class="note">{len(records)} records: {admitted} admitted, {len(admissions) - admitted} excluded (each '
        'with its reason under <a href="#admissions">Admission decisions</a>).</p>'
    )


def render_report(
    summary: StatisticsSummary,
    records: Mapping[Digest, tuple[PortablePath, PairedAttempt]],
    admissions: Mapping[PortablePath, AdmissionDecision],
    pages: Collection[str] = frozenset(),
    suite: str = "",
    harness: str | None = None,
) -> str:
    """The report of ``suite`` run on ``harness`` (None: not recorded); ``pages`` names the attempts
    (``<challenge>-<attempt>``) with a transcript page."""
    answer = effects_section(summary) + _counts(records, admissions)
    sections = [
        ("answer", "Effect of each memory system", answer),
        ("outcomes", "Per-challenge paired outcomes", _outcomes(summary)),
        ("comparisons", "Each comparison per challenge, with the power to find it", _comparisons(summary)),
        ("layers", "Grading layers: delivered, used, outcome", _layers(summary)),
        ("continuous", "Continuous measures", _continuous(summary)),
        ("noise", "Memory under noise: effect per pool size, cost per pass, retrieval", noise_section(summary)),
        (
            "admissions",
            "Admission decisions",
            _exclusions(summary) + _admissions(records, admissions, pages) + _unobserved(records),
        ),
        ("trends", "Trends per comparability key across builds", _trends(summary)),
        ("verification", "What a reader re-derives, and what rests on the signature", _VERIFICATION),
    ]
    body = "".join(
        f'<section id="{id_}" aria-labelledby="{id_}-title"><h2 id="{id_}-title">{title}</h2>{content}</section>'
        for id_, title, content in sections
    )
    title, meta = escape(report_title(summary, suite)), escape(report_meta(summary, harness))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title} · {meta}</title><style>{_STYLE}</style></head><body>"
        f'<header><h1>{title}</h1><p class="meta">{meta}</p>{_model_note(summary)}</header>'
        f"<main>{body}</main></body></html>\n"
    )
