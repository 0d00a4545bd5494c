"""Passage vectors kept between restores, so a corpus the reference memory has seen is not embedded again.

Embedding is what a restore of a large corpus spends its time on (about 30-80 ms a passage on this machine's
cores); the vectors are a pure function of the model and the passage's text, so they are kept in one SQLite file
beside the memory's home (never in a project, never mounted into a container: ``python -m bench.memory --vectors``),
keyed by the SHA-256 of the model's name and the text. A restore embeds only the passages it has not seen; every
state still holds every vector, so what a restore builds is the same with the cache warm, cold or deleted. Parallel
restores share the file: a vector two of them computed at once is written once.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from .semantic import Embedder, pack_vector

__all__ = ["embed_cached"]

_SCHEMA = "CREATE TABLE IF NOT EXISTS vector(key BLOB PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID"
_BUSY_MS = 60_000


def _key(model: str, text: str) -> bytes:
    return hashlib.sha256(model.encode("utf-8") + b"\0" + text.encode("utf-8")).digest()


def embed_cached(embedder: Embedder, texts: Sequence[str], cache: Path) -> list[bytes]:
    """Each text's packed vector, embedding (and keeping) only those ``cache`` lacks."""
    keys = [_key(embedder.model_name, text) for text in texts]
    cache.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(cache, timeout=_BUSY_MS / 1000)
    try:
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
        conn.execute(_SCHEMA)
        known: dict[bytes, bytes] = {}
        for start in range(0, len(keys), 500):  # SQLite's bound on host parameters
            batch = keys[start : start + 500]
            marks = ",".join("?" * len(batch))
            known.update(conn.execute(f"SELECT key, data FROM vector WHERE key IN ({marks})", batch).fetchall())
        first: dict[bytes, int] = {}  # each missing text once, at its first place
        for index, key in enumerate(keys):
            if key not in known:
                first.setdefault(key, index)
        vectors = embedder.embed([texts[index] for index in first.values()])
        fresh = {key: pack_vector(vector) for key, vector in zip(first, vectors, strict=True)}
        with conn:
            conn.executemany("INSERT OR IGNORE INTO vector VALUES (?, ?)", fresh.items())
        known.update(fresh)
    finally:
        conn.close()
    return [known[key] for key in keys]
