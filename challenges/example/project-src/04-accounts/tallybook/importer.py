"""Reading the CSV exports of the household's banks into transactions."""

import csv
import datetime
import io
from dataclasses import dataclass

from .ledger import Transaction
from .money import parse_amount


@dataclass(frozen=True)
class Profile:
    """How one bank lays out its export."""

    date_column: str
    date_format: str
    amount_column: str
    payee_column: str
    delimiter: str = ","
    status_column: str = ""
    skip_statuses: frozenset = frozenset()
    invert_sign: bool = False


PROFILES = {
    "harbor": Profile(
        date_column="Date",
        date_format="%m/%d/%Y",
        amount_column="Amount",
        payee_column="Description",
        status_column="Status",
        skip_statuses=frozenset({"H"}),
    ),
    "northwind": Profile(
        date_column="Booking date",
        date_format="%Y-%m-%d",
        amount_column="Amount",
        payee_column="Counterparty",
        delimiter=";",
        invert_sign=True,
    ),
}


def import_rows(text, profile_name, account=""):
    """The transactions in one export file's text, booked to ``account``."""
    profile = PROFILES[profile_name]
    reader = csv.DictReader(io.StringIO(text), delimiter=profile.delimiter)
    transactions = []
    for row in reader:
        if profile.status_column and row.get(profile.status_column, "").strip() in profile.skip_statuses:
            continue
        amount = parse_amount(row[profile.amount_column])
        if profile.invert_sign:
            amount = -amount
        date = datetime.datetime.strptime(row[profile.date_column].strip(), profile.date_format).date()
        transactions.append(Transaction(date, amount, row[profile.payee_column].strip(), account=account))
    return transactions
