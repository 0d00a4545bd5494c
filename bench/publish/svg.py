"""Inline SVG plots for the static report: effects, grading layers and trends. No scripts, no external assets.

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
    "WIDTH",
    "EffectMark",
    "MixedKeysError",
    "TrendLine",
    "effect_plot",
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


# Every chart is drawn this wide, so a phone's 390 px screen (less the page's margins) shows it at its own size
# instead of scaling its labels down to a few pixels; labels sit above their marks, never beside them.
WIDTH = 360
_LABEL = 'font-size="12" fill="#222"'


@dataclass(frozen=True)
class EffectMark:
    """One comparison on the effect chart: the difference in pass rate (-1 to 1) and its interval, if it has one."""

    label: str
    value: str  # the numbers, on their own line under the label
    difference: float
    interval: tuple[float, float] | None  # None: no pair differed, so there is nothing to draw an interval from


def effect_plot(marks: Sequence[EffectMark], title: str) -> str:
    """Each comparison's difference in pass rate with its interval, on one axis from -100 to +100 points, zero marked:
    the answer at a glance, one row per comparison."""
    left, right, row = 14.0, WIDTH - 14.0, 52

    def x(value: float) -> float:
        return left + (right - left) * (value + 1) / 2

    height = row * len(marks) + 40
    body: list[str] = []
    for index, mark in enumerate(marks):
        y = 40 + index * row
        body.append(f'<text x="{_n(left)}" y="{_n(y - 24)}" {_LABEL}>{escape(mark.label)}</text>')
        body.append(f'<text x="{_n(left)}" y="{_n(y - 10)}" {_LABEL} font-weight="bold">{escape(mark.value)}</text>')
        zero = _n(x(0))  # no difference: a dashed tick across each mark, clear of the labels
        body.append(
            f'<line x1="{zero}" y1="{_n(y - 7)}" x2="{zero}" y2="{_n(y + 7)}" stroke="#666" stroke-dasharray="2 2"/>'
        )
        if mark.interval is not None:
            low, high = mark.interval
            body.append(
                f'<line x1="{_n(x(low))}" y1="{_n(y)}" x2="{_n(x(high))}" y2="{_n(y)}" stroke="{TREATMENT_COLOUR}" '
                'stroke-width="4"/>'
            )
        body.append(f'<circle cx="{_n(x(mark.difference))}" cy="{_n(y)}" r="5" fill="{TREATMENT_COLOUR}"/>')
    axis = height - 22
    body.append(f'<line x1="{_n(left)}" y1="{_n(axis)}" x2="{_n(right)}" y2="{_n(axis)}" stroke="#444"/>')
    for tick in (-100, -50, 0, 50, 100):
        tx = x(tick / 100)
        body.append(f'<line x1="{_n(tx)}" y1="{_n(axis)}" x2="{_n(tx)}" y2="{_n(axis + 4)}" stroke="#444"/>')
        anchor = "start" if tick == -100 else "end" if tick == 100 else "middle"
        body.append(
            f'<text x="{_n(tx)}" y="{_n(axis + 16)}" {_LABEL} text-anchor="{anchor}">{tick:+d}</text>'
            if tick
            else f'<text x="{_n(tx)}" y="{_n(axis + 16)}" {_LABEL} text-anchor="middle">0</text>'
        )
    return _svg(WIDTH, height, title, body)


def layer_bars(rows: Sequence[tuple[str, int, int, str]], title: str) -> str:
    """Horizontal bars of count / total, each labelled above its bar: (label, count, total, colour)."""
    left, right, row = 4.0, WIDTH - 50.0, 30
    body: list[str] = []
    for index, (label, count, total, colour) in enumerate(rows):
        y = 16 + index * row
        width = (right - left) * (count / total if total else 0.0)
        body.append(f'<text x="{_n(left)}" y="{_n(y)}" {_LABEL}>{escape(label)}</text>')
        body.append(f'<rect x="{_n(left)}" y="{_n(y + 4)}" width="{_n(right - left)}" height="10" fill="#eee"/>')
        body.append(f'<rect x="{_n(left)}" y="{_n(y + 4)}" width="{_n(width)}" height="10" fill="{colour}"/>')
        body.append(f'<text x="{_n(right + 6)}" y="{_n(y + 13)}" {_LABEL}>{count}/{total}</text>')
    return _svg(WIDTH, row * len(rows) + 8, title, body)


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
    width, top, bottom, left, right = WIDTH, 14.0, 190.0, 34.0, WIDTH - 10.0
    count = len(line.cells)
    step = (right - left) / max(count, 1)
    xs = [left + step * (i + 0.5) for i in range(count)]
    scale = bottom - top
    body = [f'<line x1="{_n(left)}" y1="{_n(bottom)}" x2="{_n(right)}" y2="{_n(bottom)}" stroke="#444"/>']
    for tick in (0.0, 0.5, 1.0):
        y = bottom - scale * tick
        body.append(f'<line x1="{_n(left)}" y1="{_n(y)}" x2="{_n(right)}" y2="{_n(y)}" stroke="#ddd"/>')
        body.append(f'<text x="{_n(left - 6)}" y="{_n(y + 4)}" {_LABEL} text-anchor="end">{tick:.1f}</text>')
    for cell, cx in zip(line.cells, xs, strict=True):
        body.append(
            f'<text x="{_n(cx)}" y="{_n(bottom + 16)}" {_LABEL} text-anchor="middle">{escape(cell.build.label)}</text>'
        )
    body += _series(line, "control", CONTROL_COLOUR, [x - 4 for x in xs], bottom, scale)
    body += _series(line, "treatment", TREATMENT_COLOUR, [x + 4 for x in xs], bottom, scale)
    return _svg(width, int(bottom) + 26, f"pass rate by build for key {line.key_id.short}", body)
