"""Sorting transactions into categories by their payee.

A rules file has one rule per line, ``pattern = category``; blank lines and lines starting with ``#`` are
ignored. The first rule whose pattern occurs in a payee decides its category.
"""

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    pattern: str
    category: str


def parse_rules(text):
    rules = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        pattern, sep, category = line.partition("=")
        if not sep or not pattern.strip() or not category.strip():
            raise ValueError(f"rules line {number}: expected 'pattern = category', got {line!r}")
        rules.append(Rule(pattern.strip(), category.strip()))
    return rules


def category_for(payee, rules):
    for rule in rules:
        if rule.pattern in payee:
            return rule.category
    return ""


def categorise(transactions, rules):
    """The transactions with a category filled in where a rule matches; set categories are kept."""
    result = []
    for transaction in transactions:
        if not transaction.category:
            found = category_for(transaction.payee, rules)
            if found:
                transaction = dataclasses.replace(transaction, category=found)
        result.append(transaction)
    return result
