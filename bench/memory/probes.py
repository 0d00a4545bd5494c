"""Snapshot-time probes: read the live state back through the same queries the hooks use.

Full-text and graph probes reuse :mod:`bench.memory.recall` (what the agent's hooks run), so a passing probe means
the channel the agent reads from can find the memory, not just that rows exist. Hits are evidence document ids.
"""

from __future__ import annotations

import sqlite3

from bench.provision.messages import ProbeAnswer, ProbeKind, ProbeRequest, ProbeStatus

from .recall import graph_hits, search
from .semantic import Embedder, unpack_vector
from .state import StateError

__all__ = ["run_probes"]


def run_probes(
    conn: sqlite3.Connection, probes: tuple[ProbeRequest, ...], embedder: Embedder | None
) -> tuple[ProbeAnswer, ...]:
    """Answer every probe; a semantic one needs the model (the caller required it) and the vectors restore stored."""
    return tuple(_answer(conn, probe, embedder) for probe in probes)


def _answer(conn: sqlite3.Connection, probe: ProbeRequest, embedder: Embedder | None) -> ProbeAnswer:
    if probe.kind is ProbeKind.FULL_TEXT:
        hits = [row["source"] for row in search(conn, probe.query, probe.top_k)]
    elif probe.kind is ProbeKind.GRAPH:
        hits = [source for source, _, _ in graph_hits(conn, probe.query)][: probe.top_k]
    else:
        stored = int(conn.execute("SELECT count(*) FROM vector").fetchone()[0])
        if embedder is None or stored == 0:
            raise StateError(f"semantic probe {probe.name!r}: the state holds {stored} passage vectors; restore again")
        hits = _nearest(conn, embedder, probe.query, probe.top_k)
    return ProbeAnswer(name=probe.name, kind=probe.kind, status=ProbeStatus.ANSWERED, hits=tuple(hits))


def _nearest(conn: sqlite3.Connection, embedder: Embedder, query: str, top_k: int) -> list[str]:
    """Documents ranked by their best passage's cosine similarity to the query (vectors are unit length)."""
    (query_vector,) = embedder.embed([query])
    best: dict[str, float] = {}
    rows = conn.execute(
        "SELECT p.source, v.data, v.model FROM vector v JOIN passage p ON p.rowid = v.passage ORDER BY p.source"
    )
    for source, data, model in rows:
        if model != embedder.model_name:
            raise ValueError(f"stored vectors come from {model!r}, the probe embeds with {embedder.model_name!r}")
        score = sum(a * b for a, b in zip(unpack_vector(data), query_vector, strict=True))
        best[source] = max(score, best.get(source, -2.0))
    return [source for source, _ in sorted(best.items(), key=lambda item: (-item[1], item[0]))][:top_k]
