"""The static HTML report: one self-contained file that opens from disk (inline CSS and SVG, no scripts).

It says at its top how the model was reached: in policy mode, that the model was a deterministic stand-in (and
which policies it answered from). It shows per-challenge paired outcomes with their exact intervals, each memory
system beside the others (a row per system against the shared control), the three grading layers with delivery per
channel (hooks, and the memory system's own tools), the admission decisions and one trend plot per comparability
key. It contains no timestamps and iterates only in sorted
order, so the same inputs always give byte-identical HTML.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from ..analysis import (
    Admission,
    AdmissionDecision,
    Cell,
    ContinuousStatus,
    ContinuousSummary,
    Interval,
    PairedAttempt,
    StatisticsSummary,
)
from ..contracts import Digest, PortablePath
from ..errors import ContractError
from ..gateway.config import Mode
from .svg import CONTROL_COLOUR, TREATMENT_COLOUR, TrendLine, interval_plot, layer_bars, trend_plot

__all__ = ["render_report"]

_STYLE = """
body{font-family:sans-serif;margin:24px;color:#222;background:#fff;max-width:1100px}
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


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], row_classes: Sequence[str] | None = None) -> str:
    head = "".join(f"<th>{h}</th>" for h in header)
    body = []
    for index, row in enumerate(rows):
        css = f' class="{row_classes[index]}"' if row_classes else ""
        body.append(f"<tr{css}>" + "".join(f"<td>{value}</td>" for value in row) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


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
            f"{c.paired.mcnemar_p:.4g}",
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
    return _table(header, rows) + f'<figure id="outcome-intervals">{plot}</figure>'


def _layers(summary: StatisticsSummary) -> str:
    parts = []
    for c in summary.cells:
        rows = []
        for arm, colour, s in (("control", CONTROL_COLOUR, c.control), ("treatment", TREATMENT_COLOUR, c.treatment)):
            rows.append((f"{arm} delivered", s.delivered, s.attempts, colour))
            rows += [(f"{arm} · via {channel}", n, s.attempts, colour) for channel, n in s.delivered_via.items()]
            rows += [(f"{arm} used", s.used, s.attempts, colour), (f"{arm} outcome", s.passes, s.attempts, colour)]
        parts.append(f"<h3>{escape(_cell_title(c))}</h3>{layer_bars(rows, f'grading layers, {_cell_title(c)}')}")
    return "".join(parts)


def _continuous_text(measure: ContinuousSummary) -> str:
    if measure.status is ContinuousStatus.NOT_TESTED:
        return "not tested (policy mode: the stand-in model's tokens are estimates and it spends nothing)"
    if measure.status is ContinuousStatus.EXPLORATORY:
        return "exploratory (fewer than 5 pairs: no test computed)"
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
    return _table(header, rows)


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


def _admissions(
    records: Mapping[Digest, tuple[PortablePath, PairedAttempt]], admissions: Mapping[PortablePath, AdmissionDecision]
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
         f'<code title="{escape(path)}">{escape(path[:20])}&#8230;</code>']
        for challenge, _, attempt, path, record, decision in entries
    ]  # fmt: skip
    header = ["challenge", "build", "attempt", "completion", "decision", "reason", "note", "record"]
    return _table(header, rows, [e[5].decision.value for e in entries])


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
) -> str:
    admitted = sum(d.decision is Admission.ADMITTED for d in admissions.values())
    sections = [
        ("outcomes", "Per-challenge paired outcomes", _outcomes(summary)),
        ("layers", "Grading layers: delivered, used, outcome", _layers(summary)),
        ("continuous", "Continuous measures", _continuous(summary)),
        ("admissions", "Admission decisions", _admissions(records, admissions)),
        ("trends", "Trends per comparability key across builds", _trends(summary)),
    ]
    body = "".join(f'<section id="{id_}"><h2>{title}</h2>{content}</section>' for id_, title, content in sections)
    legend = (
        f'<p class="note"><span class="control">&#9632; control</span> <span class="treatment">&#9632; treatment '
        "(each memory system against the shared control)</span>"
        f" &middot; {len(records)} records, {admitted} admitted, {len(admissions) - admitted} excluded &middot; "
        f"exact {escape(summary.confidence)} intervals (Clopper-Pearson; conditional odds ratio on discordant pairs)"
        "</p>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Paired run report</title>'
        f"<style>{_STYLE}</style></head><body><h1>Paired run report</h1>{_model_note(summary)}{legend}{body}"
        "</body></html>\n"
    )
