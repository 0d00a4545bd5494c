"""What a stored object points at: every digest inside a document (blobs point at nothing).

Documents are canonical JSON, so one walk finds the references of every document type alike: trees, receipts,
action keys and results. This is what fsck checks for missing objects and what gc marks from.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ..contracts import Digest
from .store import Store

__all__ = ["references", "walk_digests"]


def references(store: Store, digest: Digest) -> Iterator[Digest]:
    """Digests named inside the object ``digest`` (none for a blob)."""
    if not store.is_document(digest):
        return
    yield from walk_digests(json.loads(store.get_bytes(digest)))


def walk_digests(value: Any) -> Iterator[Digest]:
    if isinstance(value, str):
        if Digest.pattern.fullmatch(value):
            yield Digest(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from walk_digests(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk_digests(item)
