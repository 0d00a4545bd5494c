"""Transactions and the ledger that holds them."""

import datetime
from dataclasses import dataclass


@dataclass(frozen=True)
class Transaction:
    date: datetime.date
    amount: int  # cents; negative when money leaves the account
    payee: str
    category: str = ""


class Ledger:
    def __init__(self, transactions=()):
        self.transactions = list(transactions)

    def add(self, transaction):
        self.transactions.append(transaction)

    def __iter__(self):
        return iter(self.transactions)

    def __len__(self):
        return len(self.transactions)

    def total(self, category=None):
        return sum(t.amount for t in self.transactions if category is None or t.category == category)
