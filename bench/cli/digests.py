"""Digest arguments: checked for shape when parsed, resolved against the store when the command runs.

A full digest, a hex prefix of at least four digits (``blake3:`` optional) or a ref name; see
:func:`bench.store.lookup.resolve_digest`.
"""

from __future__ import annotations

import argparse

from ..store.lookup import MIN_PREFIX, PREFIX_PATTERN, REF_PATTERN, resolve_digest

__all__ = ["DigestQuery", "digest_argument", "resolve_digest"]


class DigestQuery(str):
    """What was typed where a digest is accepted, checked for shape; :func:`resolve_digest` makes it a digest."""


def digest_argument(text: str) -> DigestQuery:
    """argparse type: a full digest, a hex prefix of at least four digits (``blake3:`` optional) or a ref name."""
    if PREFIX_PATTERN.match(text) or REF_PATTERN.match(text):
        return DigestQuery(text)
    raise argparse.ArgumentTypeError(
        f"{text!r} is not a store digest, a digest prefix of at least {MIN_PREFIX} hex digits, or a ref name"
    )
