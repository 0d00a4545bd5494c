"""argparse types for numeric options: a whole number or a number of seconds, finite and inside its range.

``int`` and ``float`` as argparse types take ``nan``, ``inf``, ``-5`` and ``1e400``, which then mean something odd
far from the command line (a gc grace of NaN spares nothing, since no age compares as below it). Each option names
its range here, and anything outside it is a usage error naming the option, before the command starts.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["seconds", "whole_number"]

_INT64 = 2**63 - 1  # what a document's integer may hold (bench.contracts.strict_json)


def whole_number(low: int, high: int = _INT64) -> Callable[[str], int]:
    """A whole number from ``low`` to ``high``, written in ASCII digits."""

    def parse(text: str) -> int:
        digits = text.strip()
        if not (digits.removeprefix("-").isascii() and digits.removeprefix("-").isdigit()) or len(digits) > 20:
            raise argparse.ArgumentTypeError(f"expected a whole number from {low} to {high}, got {text!r}")
        value = int(digits)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected a whole number from {low} to {high}, got {text!r}")
        return value

    return parse


def seconds(low: float, high: float) -> Callable[[str], float]:
    """A finite number of seconds from ``low`` to ``high``; NaN and infinity are refused."""

    def parse(text: str) -> float:
        refusal = argparse.ArgumentTypeError(f"expected a number of seconds from {low:g} to {high:g}, got {text!r}")
        try:
            value = float(text)
        except ValueError:
            raise refusal from None
        if not (math.isfinite(value) and low <= value <= high):
            raise refusal
        return value

    return parse
