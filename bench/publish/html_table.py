"""One captioned HTML table, as every section of the report draws its tables."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

__all__ = ["table"]


def table(
    header: Sequence[str], rows: Sequence[Sequence[str]], caption: str, row_classes: Sequence[str] | None = None
) -> str:
    """A captioned table with column headers, in a box that scrolls sideways on a narrow screen."""
    head = "".join(f'<th scope="col">{h}</th>' for h in header)
    body = []
    for index, row in enumerate(rows):
        css = f' class="{row_classes[index]}"' if row_classes else ""
        body.append(f"<tr{css}>" + "".join(f"<td>{value}</td>" for value in row) + "</tr>")
    return (
        # A box that scrolls must be reachable from the keyboard: focusable, and named by its table's caption.
        f'<div class="scroll" tabindex="0" role="region" aria-label="{escape(caption)}"><table>'
        f"<caption>{escape(caption)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )
