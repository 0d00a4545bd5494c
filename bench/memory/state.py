"""The reference memory state: one SQLite file with FTS5 passages, a graph of nodes and edges, and vectors.

Built once per restore from the evidence corpus (backfill) plus the graph arm's artifact, then only read: by the
hooks inside the agent's container (mounted read-only, see :mod:`bench.memory.recall` for the layout) and by
snapshot on the host. Backfill makes, for each evidence document, a node ``doc:<id>`` of the document's kind, a
node ``file:<anchor>`` per anchor with an ``anchors`` edge to it, a ``relates`` edge per related document, and one
FTS5 row per passage.

The graph artifact is this system's own format, a JSON object::

    {"nodes": [{"key": "...", "kind": "...", "title": "...", "body": "...", "source": "<doc id or null>"}],
     "edges": [{"src": "<key>", "dst": "<key>", "kind": "..."}]}

whose nodes are added to the backfilled ones and whose edges may join both (an empty graph is ``{"nodes": [],
"edges": []}``). Nothing identifying the run is written into the file: it is visible to the agent.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

from pydantic import StringConstraints, ValidationError

from bench.contracts import ContractModel, canonical_json

from .notes import EvidenceNote
from .semantic import Embedder, pack_vector
from .vector_cache import embed_cached

__all__ = [
    "GraphEdge",
    "GraphFile",
    "GraphNode",
    "StateError",
    "build_state",
    "fingerprint",
    "graph_counts",
    "item_count",
]

_SCHEMA = """
CREATE TABLE node(key TEXT PRIMARY KEY, kind TEXT NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL, source TEXT);
CREATE TABLE edge(src TEXT NOT NULL REFERENCES node(key), dst TEXT NOT NULL REFERENCES node(key),
                  kind TEXT NOT NULL, PRIMARY KEY (src, dst, kind));
CREATE VIRTUAL TABLE passage USING fts5(title, heading, body, source UNINDEXED, tokenize='porter unicode61');
CREATE TABLE vector(passage INTEGER PRIMARY KEY, model TEXT NOT NULL, data BLOB NOT NULL);
CREATE TABLE graph_part(part TEXT NOT NULL CHECK (part IN ('node', 'edge')), name TEXT NOT NULL);
"""
Key = Annotated[str, StringConstraints(min_length=1, max_length=1000)]


class StateError(ValueError):
    """The memory state cannot be built or read; the message names the input."""


class GraphNode(ContractModel):
    key: Key
    kind: Key
    title: str
    body: str = ""
    source: str | None = None


class GraphEdge(ContractModel):
    src: Key
    dst: Key
    kind: Key


class GraphFile(ContractModel):
    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]


def build_state(
    path: Path,
    documents: list[EvidenceNote],
    graph_path: Path,
    embedder: Embedder | None,
    vectors: Path | None = None,
) -> None:
    """Write a new state file at ``path`` (which must not exist) in one transaction; ``vectors`` is the cache of
    passage vectors kept between restores (:mod:`.vector_cache`), None to embed every passage afresh."""
    try:
        graph = GraphFile.model_validate_json(graph_path.read_bytes())
    except (OSError, ValidationError) as exc:
        raise StateError(f"graph artifact {graph_path} is not a graph file ({exc}); see bench.memory.state") from exc
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.executescript(_SCHEMA)
        with conn:
            _backfill(conn, documents)
            _merge_graph(conn, graph, {d.id for d in documents})
            if embedder is not None:
                _embed(conn, embedder, vectors)
    finally:
        conn.close()


def _backfill(conn: sqlite3.Connection, documents: list[EvidenceNote]) -> None:
    for doc in documents:
        body = "\n\n".join(p.text for p in doc.passages)
        conn.execute(
            "INSERT INTO node VALUES (?, ?, ?, ?, ?)", (f"doc:{doc.id}", doc.kind.value, doc.title, body, doc.id)
        )
        for passage in doc.passages:
            conn.execute(
                "INSERT INTO passage(title, heading, body, source) VALUES (?, ?, ?, ?)",
                (doc.title, passage.heading, passage.text, doc.id),
            )
        for anchor in doc.anchors:
            conn.execute("INSERT OR IGNORE INTO node VALUES (?, 'file', ?, '', NULL)", (f"file:{anchor}", anchor))
            conn.execute("INSERT INTO edge VALUES (?, ?, 'anchors')", (f"doc:{doc.id}", f"file:{anchor}"))
    for doc in documents:  # after every node exists, so a link may point forward
        for target in doc.related:
            conn.execute("INSERT OR IGNORE INTO edge VALUES (?, ?, 'relates')", (f"doc:{doc.id}", f"doc:{target}"))


def _merge_graph(conn: sqlite3.Connection, graph: GraphFile, doc_ids: set[str]) -> None:
    for node in graph.nodes:
        if node.source is not None and node.source not in doc_ids:
            raise StateError(f"graph node {node.key!r} cites source {node.source!r}, which the corpus does not hold")
        try:
            conn.execute(
                "INSERT INTO node VALUES (?, ?, ?, ?, ?)", (node.key, node.kind, node.title, node.body, node.source)
            )
            conn.execute("INSERT INTO graph_part VALUES ('node', ?)", (node.key,))
        except sqlite3.IntegrityError:
            raise StateError(f"graph node {node.key!r} is already defined by the backfill or the graph") from None
    for edge in graph.edges:
        try:
            conn.execute("INSERT INTO edge VALUES (?, ?, ?)", (edge.src, edge.dst, edge.kind))
            conn.execute("INSERT INTO graph_part VALUES ('edge', ?)", (f"{edge.src} {edge.kind} {edge.dst}",))
        except sqlite3.IntegrityError:
            raise StateError(
                f"graph edge {edge.src!r} -{edge.kind}-> {edge.dst!r} names an unknown node or repeats an edge"
            ) from None


def _embed(conn: sqlite3.Connection, embedder: Embedder, cache: Path | None) -> None:
    rows = conn.execute("SELECT rowid, title, heading, body FROM passage ORDER BY rowid").fetchall()
    texts = [" ".join(part for part in row[1:] if part) for row in rows]
    packed = [pack_vector(v) for v in embedder.embed(texts)] if cache is None else embed_cached(embedder, texts, cache)
    conn.executemany(
        "INSERT INTO vector VALUES (?, ?, ?)",
        [(row[0], embedder.model_name, data) for row, data in zip(rows, packed, strict=True)],
    )


def item_count(conn: sqlite3.Connection) -> int:
    """Retrievable memory items: passages (the unit every probe and hook reads)."""
    return int(conn.execute("SELECT count(*) FROM passage").fetchone()[0])


def graph_counts(conn: sqlite3.Connection) -> tuple[int, int]:
    """The nodes and edges the graph arm added, apart from what the evidence backfilled (its anchors count there)."""
    rows = dict(conn.execute("SELECT part, count(*) FROM graph_part GROUP BY part").fetchall())
    return int(rows.get("node", 0)), int(rows.get("edge", 0))


def fingerprint(conn: sqlite3.Connection) -> str:
    """SHA-256 of the state's content in a canonical order, independent of row ids and page layout."""
    tables: dict[str, Iterable[tuple[object, ...]]] = {
        "nodes": conn.execute("SELECT key, kind, title, body, source FROM node ORDER BY key"),
        "edges": conn.execute("SELECT src, dst, kind FROM edge ORDER BY src, dst, kind"),
        "passages": conn.execute("SELECT source, heading, title, body FROM passage ORDER BY source, rowid"),
        "vectors": conn.execute("SELECT model, hex(data) FROM vector ORDER BY passage"),
    }
    return hashlib.sha256(canonical_json({name: [list(r) for r in rows] for name, rows in tables.items()})).hexdigest()
