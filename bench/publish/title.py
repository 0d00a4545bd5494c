"""What the report's first lines say: a title naming what was compared, and how it was run.

Both come from the statistics summary (and the harness the plan names), so the report stays a deterministic
function of its inputs (no date: a re-derived report must be byte-identical).
"""

from __future__ import annotations

from ..analysis import StatisticsSummary

__all__ = ["report_meta", "report_title"]


def report_title(summary: StatisticsSummary, suite: str) -> str:
    conditions = sorted({cell.build.label for cell in summary.cells})
    compared = ", ".join(conditions) or "no memory system"
    return f"{suite or 'Paired run'}: {compared} against the shared control"


def report_meta(summary: StatisticsSummary, harness: str | None) -> str:
    """The harness, the model and how it was reached: what a reader needs before any number."""
    models = sorted({cell.key.model for cell in summary.cells})
    modes = sorted({cell.key.gateway_mode.value for cell in summary.cells})
    return (
        f"harness {harness or 'not recorded'} · model {', '.join(models) or 'none'} · "
        f"gateway {'/'.join(modes) or 'no'} mode"
    )
