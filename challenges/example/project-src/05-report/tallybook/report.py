"""Where the money went: totals per month and category."""

from collections import defaultdict

from .money import format_amount


def monthly_totals(transactions):
    """{'2024-03': {'food': -1234, ...}, ...}; uncategorised money is under ''."""
    totals = defaultdict(lambda: defaultdict(int))
    for transaction in transactions:
        totals[transaction.date.strftime("%Y-%m")][transaction.category] += transaction.amount
    return {month: dict(categories) for month, categories in totals.items()}


def render(totals):
    lines = []
    for month in sorted(totals):
        lines.append(month)
        categories = totals[month]
        for category in sorted(categories, key=lambda name: (categories[name], name)):
            lines.append(f"  {category or '(none)':<20} {format_amount(categories[category]):>12}")
    return "\n".join(lines)
