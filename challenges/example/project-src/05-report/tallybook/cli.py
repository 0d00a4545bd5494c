"""The tallybook command line."""

import argparse
import sys
from pathlib import Path

from . import store
from .importer import PROFILES, import_rows
from .report import monthly_totals, render
from .rules import categorise, parse_rules


def _import(args):
    existing = store.load(args.ledger) if args.ledger.exists() else []
    added = import_rows(args.export.read_text(encoding="utf-8"), args.profile, args.account)
    store.dump(existing + added, args.ledger)
    print(f"imported {len(added)} transactions into {args.ledger}")


def _categorise(args):
    rules = parse_rules(args.rules.read_text(encoding="utf-8"))
    store.dump(categorise(store.load(args.ledger), rules), args.ledger)


def _report(args):
    print(render(monthly_totals(store.load(args.ledger))))


def build_parser():
    parser = argparse.ArgumentParser(prog="tallybook", description="A household ledger in a CSV file.")
    sub = parser.add_subparsers(dest="command", required=True)

    command = sub.add_parser("import", help="add a bank export to the ledger")
    command.add_argument("profile", choices=sorted(PROFILES))
    command.add_argument("export", type=Path)
    command.add_argument("ledger", type=Path)
    command.add_argument("--account", default="")
    command.set_defaults(handler=_import)

    command = sub.add_parser("categorise", help="fill in categories from a rules file")
    command.add_argument("ledger", type=Path)
    command.add_argument("rules", type=Path)
    command.set_defaults(handler=_categorise)

    command = sub.add_parser("report", help="totals per month and category")
    command.add_argument("ledger", type=Path)
    command.set_defaults(handler=_report)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    args.handler(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
