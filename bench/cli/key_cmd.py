"""`stele-bench key generate PATH`: an ed25519 key to sign published bundles with (``publish --sign-key``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..publish.signing import generate_key
from .output import Output

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("key")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    generate = verbs.add_parser(
        "generate", help="write a new ed25519 private key to PATH (mode 0600) and its public key to PATH.pub"
    )
    generate.add_argument("path", type=Path, help="where the private key goes; never overwritten, never published")
    generate.set_defaults(handler=_generate)


def _generate(args: argparse.Namespace, out: Output) -> int:
    private, public, keyid = generate_key(args.path)
    data = {"private": str(private), "public": str(public), "keyid": keyid}
    lines = [
        f"private key: {private} (keep it; sign with `stele-bench publish BUNDLE --sign-key {private}`)",
        f"public key: {public} (give it to readers: `stele-bench verify MANIFEST --trust {public}`)",
        f"key id: {keyid}",
    ]
    out.result(data, "\n".join(lines))
    return 0
