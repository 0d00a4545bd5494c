"""Ledger files: one line naming the layout, then CSV with a header row."""

import csv
import dataclasses
import datetime

from .ledger import Transaction
from .money import format_amount, parse_amount

MAGIC = "# tallybook ledger v1"


class LedgerFormatError(ValueError):
    pass


def columns():
    return [field.name for field in dataclasses.fields(Transaction)]


def dump(transactions, path):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        handle.write(MAGIC + "\n")
        writer = csv.DictWriter(handle, fieldnames=columns())
        writer.writeheader()
        for transaction in transactions:
            row = dataclasses.asdict(transaction)
            row["date"] = transaction.date.isoformat()
            row["amount"] = format_amount(transaction.amount)
            writer.writerow(row)


def load(path):
    with open(path, newline="", encoding="utf-8") as handle:
        if handle.readline().rstrip("\n") != MAGIC:
            raise LedgerFormatError(f"{path} is not a tallybook ledger")
        reader = csv.DictReader(handle)
        rows = list(reader)
    transactions = []
    for row in rows:
        row["date"] = datetime.date.fromisoformat(row["date"])
        row["amount"] = parse_amount(row["amount"])
        transactions.append(Transaction(**row))
    return transactions
