"""Digests as people type them: a full digest, a unique prefix of its hex (as git takes), or a ref name.

Progress lines print the first twelve hex digits (``666786321a37``); every command that accepts a digest takes that
back, and so does :func:`bench.results.load_bundle`. An ambiguous prefix is refused listing what it matches.
"""

from __future__ import annotations

import re

from ..contracts import Digest
from ..errors import UsageError
from .store import Store

__all__ = ["MIN_PREFIX", "PREFIX_PATTERN", "REF_PATTERN", "resolve_digest"]

MIN_PREFIX = 4
PREFIX_PATTERN = re.compile(rf"^(?:blake3:)?([0-9a-f]{{{MIN_PREFIX},64}})(?::[0-9]*)?$")
REF_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,200}$")
_SHOWN = 5


def resolve_digest(store: Store, query: str) -> Digest:
    """The one digest ``query`` names: itself when whole, the ref of that name, or the only object whose hex
    starts with it."""
    if Digest.pattern.fullmatch(query):
        return _whole(store, Digest(query))
    if REF_PATTERN.match(query):
        ref = store.get_ref(query)
        if ref is not None:
            return ref
    matched = PREFIX_PATTERN.match(query)
    if matched is None:
        raise UsageError(f"no ref named {query!r} in the store at {store.location}", field="digest", actual=query)
    prefix = matched.group(1)
    found = store.backend.with_prefix(prefix, _SHOWN + 1)
    if not found:
        raise UsageError(
            f"no object in the store at {store.location} has a digest starting with {prefix}"
            + (f", and no ref is named {query!r}" if REF_PATTERN.match(query) else ""),
            field="digest",
            actual=query,
            hint="`stele-bench store ls --all` lists every object",
        )
    if len(found) > 1:
        listed = ", ".join(digest.hex[:16] for digest in found[:_SHOWN])
        more = " and more" if len(found) > _SHOWN else ""
        raise UsageError(
            f"digest prefix {prefix} is ambiguous: it starts {listed}{more}",
            field="digest",
            actual=query,
            hint="give more hex digits",
        )
    return found[0]


def _whole(store: Store, digest: Digest) -> Digest:
    """A whole digest as typed; one whose size disagrees with the object its hash names is a typing mistake,
    refused as one, not reported as a missing (or damaged) object."""
    if store.has(digest):
        return digest
    for found in store.backend.with_prefix(digest.hex, 2):
        if found.hex == digest.hex:
            raise UsageError(
                f"digest {digest} says {digest.size} bytes, but the object with that hash in the store at "
                f"{store.location} is {found.size} bytes",
                field="digest",
                expected=str(found),
                actual=str(digest),
                hint="the size after the last colon is part of the digest; copy it whole",
            )
    return digest
