"""`stele-bench schema [NAME]`: the JSON Schema of the public contracts."""

from __future__ import annotations

import argparse
import json

from ..errors import UsageError
from ..run.catalogue import CONTRACTS
from .output import Output

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("schema")
    parser.add_argument("name", nargs="?", help="a contract name; omit to list them all")
    parser.set_defaults(handler=_schema)


def _schema(args: argparse.Namespace, out: Output) -> int:
    if args.name is None:
        names = CONTRACTS.names()
        out.result({"contracts": names}, "\n".join(names))
    else:
        if args.name not in CONTRACTS.names():
            raise UsageError(
                f"no public contract is named {args.name!r}",
                field="name",
                actual=args.name,
                hint="`stele-bench schema` lists them",
            )
        schema = CONTRACTS.json_schema(args.name)
        out.result(schema, json.dumps(schema, indent=2, sort_keys=True))
    return 0
