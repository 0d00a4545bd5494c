"""What the report says first: a title naming what was compared, and one sentence per memory system.

Both come from the statistics summary alone, so the report stays a deterministic function of its inputs (no
date: a re-derived report must be byte-identical).
"""

from __future__ import annotations

from html import escape

from ..analysis import StatisticsSummary

__all__ = ["headlines", "report_title"]

EXPLORATORY = 5  # fewer admitted pairs than this: every test is exploratory


def report_title(summary: StatisticsSummary, suite: str) -> str:
    conditions = sorted({cell.build.label for cell in summary.cells})
    models = sorted({cell.key.model for cell in summary.cells})
    modes = sorted({cell.key.gateway_mode.value for cell in summary.cells})
    compared = ", ".join(conditions) or "no memory system"
    return (
        f"{suite or 'Paired run'}: {compared} against the shared control · model {', '.join(models) or 'none'}"
        f" · {'/'.join(modes) or 'no'} mode"
    )


def headlines(summary: StatisticsSummary) -> str:
    """One sentence per memory system, pooled over its challenges: passes, delivery, the discordant pairs."""
    lines = []
    for label in sorted({cell.build.label for cell in summary.cells}):
        cells = [cell for cell in summary.cells if cell.build.label == label]
        pairs = sum(len(cell.attempts) for cell in cells)
        treated = sum(cell.treatment.passes for cell in cells)
        control = sum(cell.control.passes for cell in cells)
        delivered = sum(cell.treatment.delivered for cell in cells)
        better = sum(cell.paired.treatment_only for cell in cells)
        worse = sum(cell.paired.control_only for cell in cells)
        flag = f" Exploratory: fewer than {EXPLORATORY} pairs." if pairs < EXPLORATORY else ""
        lines.append(
            f"<li><strong>{escape(label)}</strong>: with memory {treated} of {pairs} admitted pairs passed, "
            f"without {control} of {pairs}; memory reached the model in {delivered} of {pairs}; "
            f"{better} pair(s) passed only with memory, {worse} only without, over {len(cells)} "
            f"challenge(s).{flag}</li>"
        )
    return f'<ul class="headline">{"".join(lines)}</ul>' if lines else '<p class="headline">No admitted pairs.</p>'
