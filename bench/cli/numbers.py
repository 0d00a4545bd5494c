"""argparse types for numeric options: a whole number or a number of seconds, finite and inside its range.

``int`` and ``float`` as argparse types take ``nan``, ``inf``, ``-5`` and ``1e400``, which then mean something odd
far from the command line (a gc grace of NaN spares nothing, since no age compares as below it). Each option names
its range here, and anything outside it is a usage error naming the option, before the command starts.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import TypeVar

__all__ = ["confidence", "seconds", "usd", "whole_number"]

N = TypeVar("N", float, Decimal)

_INT64 = 2**63 - 1  # what a document's integer may hold (bench.contracts.strict_json)
_PROBABILITY = re.compile(r"0\.[0-9]*[1-9]")  # bench.analysis.prereg's Probability


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
    refusal = f"expected a number of seconds from {low:g} to {high:g}"
    return lambda text: _finite(text, float, lambda value: math.isfinite(value) and low <= value <= high, refusal)


def usd(text: str) -> Decimal:
    """An amount in USD, parsed straight to Decimal (a cap is compared exactly, never through a float)."""
    refusal = "expected a non-negative amount in USD such as 12.50"
    return _finite(text, Decimal, lambda amount: amount.is_finite() and amount >= 0, refusal)


def confidence(text: str) -> str:
    """A confidence level as a preregistration writes it (``0.95``): a decimal between 0 and 1, kept as text."""
    if not _PROBABILITY.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected a confidence level such as 0.95 (above 0, below 1), got {text!r}")
    return text


def _finite(text: str, parse: Callable[[str], N], fits: Callable[[N], bool], refusal: str) -> N:
    try:
        value = parse(text)
    except (ValueError, InvalidOperation):
        raise argparse.ArgumentTypeError(f"{refusal}, got {text!r}") from None
    if not fits(value):
        raise argparse.ArgumentTypeError(f"{refusal}, got {text!r}")
    return value
