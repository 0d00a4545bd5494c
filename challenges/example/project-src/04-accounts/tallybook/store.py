"""Ledger files: one line naming the layout version, then CSV with a header row."""

import csv
import dataclasses
import datetime

from .ledger import Transaction
from .money import format_amount, parse_amount
from .upgrade import CURRENT_VERSION, LedgerFormatError, upgrade_rows

MAGIC = "# tallybook ledger v"

__all__ = ["LedgerFormatError", "columns", "dump", "load"]


def columns():
    return [field.name for field in dataclasses.fields(Transaction)]


def dump(transactions, path):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        handle.write(f"{MAGIC}{CURRENT_VERSION}\n")
        writer = csv.DictWriter(handle, fieldnames=columns())
        writer.writeheader()
        for transaction in transactions:
            row = dataclasses.asdict(transaction)
            row["date"] = transaction.date.isoformat()
            row["amount"] = format_amount(transaction.amount)
            writer.writerow(row)


def _version(line, path):
    line = line.rstrip("\r\n")
    if not line.startswith(MAGIC) or not line[len(MAGIC):].isdigit():
        raise LedgerFormatError(f"{path} is not a tallybook ledger")
    return int(line[len(MAGIC):])


def load(path):
    with open(path, newline="", encoding="utf-8") as handle:
        version = _version(handle.readline(), path)
        reader = csv.DictReader(handle)
        rows = list(reader)
        found = reader.fieldnames or []
    rows, found = upgrade_rows(version, rows, found)
    if found != columns():
        raise LedgerFormatError(f"{path}: columns {found} are not the version {CURRENT_VERSION} layout {columns()}")
    transactions = []
    for row in rows:
        row["date"] = datetime.date.fromisoformat(row["date"])
        row["amount"] = parse_amount(row["amount"])
        transactions.append(Transaction(**row))
    return transactions
