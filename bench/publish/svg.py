"""Inline SVG plots for the static report: intervals, grading layers and trends. No scripts, no external assets.

Coordinates are printed with fixed precision so the same inputs give byte-identical markup.
A trend line is one comparability key across builds; ``TrendLine`` refuses points from two keys, because a
change of verifier or model would otherwise read as a change caused by the build.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from ..analysis import Cell
from ..contracts import Digest
from ..errors import ContractError

__all__ = [
    "BAND_COLOURS",
    "CONTROL_COLOUR",
    "TREATMENT_COLOUR",
    "MixedKeysError",
    "TrendLine",
    "interval_plot",
    "layer_bars",
    "trend_plot",
]

CONTROL_COLOUR = "#b35806"
TREATMENT_COLOUR = "#1f5fa6"
# Interval bands on trend plots: lighter solid tints (not opacity), so a screenshot can find them exactly.
# Interval bands at 3:1 or more against the white page (WCAG 1.4.11, graphics), lighter than their lines.
BAND_COLOURS = {CONTROL_COLOUR: "#c47f3e", TREATMENT_COLOUR: "#5b8fd0"}


class MixedKeysError(ContractError):
    """Points with different comparability keys were about to share one trend line."""

    def __init__(self, keys: Sequence[str]) -> None:
        super().__init__(
            f"refusing to draw {len(keys)} comparability keys on one trend line ({', '.join(keys)}); "
            "draw one line per key"
        )
        self.keys = tuple(keys)


@dataclass(frozen=True)
class TrendLine:
    """The cells of one comparability key, ordered by build sequence."""

    key_id: Digest
    cells: tuple[Cell, ...]

    @classmethod
    def of(cls, cells: Sequence[Cell]) -> TrendLine:
        keys = sorted({c.key_id for c in cells})
        if len(keys) != 1:
            raise MixedKeysError(keys) if keys else ContractError("a trend line needs at least one point")
        return cls(key_id=keys[0], cells=tuple(sorted(cells, key=lambda c: (c.build.sequence, c.build.label))))

    def __post_init__(self) -> None:
        stray = sorted({c.key_id for c in self.cells} - {self.key_id})
        if stray:
            raise MixedKeysError([self.key_id, *stray])


def _n(value: float) -> str:
    return f"{value:.2f}"


def _svg(width: int, height: int, title: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img"><title>{escape(title)}</title>' + "".join(body) + "</svg>"
    )


def _axis(x0: float, x1: float, y: float) -> list[str]:
    parts = [f'<line x1="{_n(x0)}" y1="{_n(y)}" x2="{_n(x1)}" y2="{_n(y)}" stroke="#444"/>']
    for tick in range(0, 11, 2):
        x = x0 + (x1 - x0) * tick / 10
        parts.append(f'<line x1="{_n(x)}" y1="{_n(y)}" x2="{_n(x)}" y2="{_n(y + 4)}" stroke="#444"/>')
        parts.append(f'<text x="{_n(x)}" y="{_n(y + 15)}" font-size="10" text-anchor="middle">{tick / 10:.1f}</text>')
    return parts


def interval_plot(rows: Sequence[tuple[str, float, float, float, str]], title: str) -> str:
    """One horizontal interval per row on [0, 1]: (label, low, high, point estimate, colour)."""
    left, right, row_height = 380.0, 700.0, 18  # room for "challenge @ build arm" labels
    height = row_height * len(rows) + 30
    body: list[str] = []
    for index, (label, low, high, point, colour) in enumerate(rows):
        y = 12 + index * row_height

        def x(v: float) -> float:
            return left + (right - left) * v

        body.append(f'<text x="{_n(left - 6)}" y="{_n(y + 4)}" font-size="11" text-anchor="end">{escape(label)}</text>')
        body.append(
            f'<line x1="{_n(x(low))}" y1="{_n(y)}" x2="{_n(x(high))}" y2="{_n(y)}" stroke="{colour}" stroke-width="3"/>'
        )
        body.append(f'<circle cx="{_n(x(point))}" cy="{_n(y)}" r="4" fill="{colour}"/>')
    body.extend(_axis(left, right, height - 22))
    return _svg(int(right) + 20, height, title, body)


def layer_bars(rows: Sequence[tuple[str, int, int, str]], title: str) -> str:
    """Horizontal bars of count / total: (label, count, total, colour)."""
    left, right, row_height = 250.0, 570.0, 16  # room for "treatment · via anchor-triggered-recall"
    height = row_height * len(rows) + 30
    body: list[str] = []
    for index, (label, count, total, colour) in enumerate(rows):
        y = 6 + index * row_height
        width = (right - left) * (count / total if total else 0.0)
        body.append(
            f'<text x="{_n(left - 6)}" y="{_n(y + 10)}" font-size="11" text-anchor="end">{escape(label)}</text>'
        )
        body.append(f'<rect x="{_n(left)}" y="{_n(y)}" width="{_n(right - left)}" height="12" fill="#eee"/>')
        body.append(f'<rect x="{_n(left)}" y="{_n(y)}" width="{_n(width)}" height="12" fill="{colour}"/>')
        body.append(f'<text x="{_n(right + 4)}" y="{_n(y + 10)}" font-size="10">{count}/{total}</text>')
    body.extend(_axis(left, right, height - 22))
    return _svg(int(right) + 50, height, title, body)


def _series(line: TrendLine, arm: str, colour: str, x: list[float], y_of: float, y_scale: float) -> list[str]:
    points, whiskers = [], []
    for cell, cx in zip(line.cells, x, strict=True):
        summary = cell.treatment if arm == "treatment" else cell.control
        rate = summary.passes / summary.attempts
        low = summary.pass_rate.low
        high = 1.0 if summary.pass_rate.high is None else summary.pass_rate.high
        points.append(f"{_n(cx)},{_n(y_of - y_scale * rate)}")
        whiskers.append(
            f'<line x1="{_n(cx)}" y1="{_n(y_of - y_scale * low)}" x2="{_n(cx)}" y2="{_n(y_of - y_scale * high)}" '
            f'stroke="{BAND_COLOURS[colour]}" stroke-width="6"/>'
        )
        whiskers.append(f'<circle cx="{_n(cx)}" cy="{_n(y_of - y_scale * rate)}" r="4" fill="{colour}"/>')
    polyline = f'<polyline points="{" ".join(points)}" fill="none" stroke="{colour}" stroke-width="2"/>'
    return [polyline, *whiskers]


def trend_plot(line: TrendLine) -> str:
    """Pass rate per build for one key: a control and a treatment series, each point with its exact interval."""
    width, top, bottom, left, right = 560, 14.0, 190.0, 50.0, 530.0
    count = len(line.cells)
    step = (right - left) / max(count, 1)
    xs = [left + step * (i + 0.5) for i in range(count)]
    scale = bottom - top
    body = [f'<line x1="{_n(left)}" y1="{_n(bottom)}" x2="{_n(right)}" y2="{_n(bottom)}" stroke="#444"/>']
    for tick in (0.0, 0.5, 1.0):
        y = bottom - scale * tick
        body.append(f'<line x1="{_n(left)}" y1="{_n(y)}" x2="{_n(right)}" y2="{_n(y)}" stroke="#ddd"/>')
        body.append(f'<text x="{_n(left - 6)}" y="{_n(y + 4)}" font-size="10" text-anchor="end">{tick:.1f}</text>')
    for cell, cx in zip(line.cells, xs, strict=True):
        body.append(
            f'<text x="{_n(cx)}" y="{_n(bottom + 16)}" font-size="10" text-anchor="middle">'
            f"{escape(cell.build.label)}</text>"
        )
    body += _series(line, "control", CONTROL_COLOUR, [x - 4 for x in xs], bottom, scale)
    body += _series(line, "treatment", TREATMENT_COLOUR, [x + 4 for x in xs], bottom, scale)
    return _svg(width, int(bottom) + 26, f"pass rate by build for key {line.key_id.short}", body)
