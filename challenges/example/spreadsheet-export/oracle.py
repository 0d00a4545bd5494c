"""A reference solution: an export module in the spreadsheet's CSV dialect and its command."""

from pathlib import Path

EXPORT = '''"""Writing the ledger as CSV for the household spreadsheet."""

import csv

from . import store
from .money import format_amount


def spreadsheet_amount(cents):
    """The spreadsheet runs with the German locale: a decimal comma and no thousands separator."""
    return format_amount(cents).replace(".", ",")


def write_export(ledger, out):
    """Write every transaction of ``ledger`` to ``out``, semicolon separated; returns how many."""
    transactions = store.load(ledger)
    with open(out, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter=";")
        writer.writerow(["date", "payee", "category", "amount"])
        for transaction in transactions:
            writer.writerow(
                [transaction.date.isoformat(), transaction.payee, transaction.category,
                 spreadsheet_amount(transaction.amount)]
            )
    return len(transactions)
'''
EDITS = (
    (
        "from .importer import PROFILES, import_rows\n",
        "from .export import write_export\nfrom .importer import PROFILES, import_rows\n",
    ),
    (
        "def build_parser():\n",
        "def _export(args):\n    count = write_export(args.ledger, args.out)\n"
        '    print(f"exported {count} transactions to {args.out}")\n\n\ndef build_parser():\n',
    ),
    (
        "    command.set_defaults(handler=_report)\n",
        "    command.set_defaults(handler=_report)\n\n"
        '    command = sub.add_parser("export", help="write the transactions as CSV for the household spreadsheet")\n'
        '    command.add_argument("ledger", type=Path)\n    command.add_argument("out", type=Path)\n'
        "    command.set_defaults(handler=_export)\n",
    ),
)

Path("tallybook/export.py").write_text(EXPORT, encoding="utf-8")
cli = Path("tallybook/cli.py")
text = cli.read_text(encoding="utf-8")
for old, new in EDITS:
    if text.count(old) != 1:
        raise SystemExit(f"{cli}: expected exactly one {old!r}")
    text = text.replace(old, new)
cli.write_text(text, encoding="utf-8")
