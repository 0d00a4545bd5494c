"""Amounts as integer cents, so that sums never drift."""

import re
from decimal import Decimal

_AMOUNT = re.compile(r"[-+]?\d+(\.\d{1,2})?")


def parse_amount(text):
    """'12.34' -> 1234 and '-0.5' -> -50; anything else raises ValueError."""
    cleaned = text.strip()
    if not _AMOUNT.fullmatch(cleaned):
        raise ValueError(f"not an amount: {text!r}")
    return int(Decimal(cleaned) * 100)


def format_amount(cents):
    """1234 -> '12.34' and -50 -> '-0.50'."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"
