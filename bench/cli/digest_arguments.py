"""Digest arguments: checked for shape when parsed, resolved against the store when the command runs.

A full digest, a hex prefix of at least four digits (``blake3:`` optional) or a ref name; see
:func:`bench.store.lookup.resolve_digest`.
"""

from __future__ import annotations

import argparse

from ..store.lookup import MIN_PREFIX, PREFIX_PATTERN, REF_PATTERN, resolve_digest

__all__ = ["DigestQuery", "digest_argument", "ref_argument", "resolve_digest"]


class DigestQuery(str):
    """What was typed where a digest is accepted, checked for shape; :func:`resolve_digest` makes it a digest."""


def digest_argument(text: str) -> DigestQuery:
    """argparse type: a full digest, a hex prefix of at least four digits (``blake3:`` optional) or a ref name."""
    if PREFIX_PATTERN.fullmatch(text) or REF_PATTERN.fullmatch(text):
        return DigestQuery(text)
    raise argparse.ArgumentTypeError(
        f"{text!r} is not a store digest, a digest prefix of at least {MIN_PREFIX} hex digits, or a ref name"
    )


def ref_argument(text: str) -> str:
    """argparse type: a ref name as the store keeps them (``published/example``): letters, digits and ``._/-``."""
    if REF_PATTERN.fullmatch(text):  # not .match: "$" also matches before a final newline
        return text
    raise argparse.ArgumentTypeError(
        f"{text!r} is not a ref name: up to 201 letters, digits, '.', '_', '/' or '-', starting with a letter or digit"
    )
