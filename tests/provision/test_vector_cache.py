"""The reference memory keeps passage vectors between restores: a corpus it has seen is not embedded again, and
the state a restore builds is the same, byte for byte in its fingerprint, with the cache warm, cold or absent."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from bench.memory.notes import read_corpus
from bench.memory.recall import connect
from bench.memory.semantic import Embedder, require_embedder
from bench.memory.state import build_state, fingerprint
from bench.memory.vector_cache import embed_cached
from bench.provision.fixture import DistractorPool, PoolGenerator
from bench.provision.pool import pool_documents

REPO = Path(__file__).resolve().parents[2]
EVIDENCE = REPO / "challenges" / "example" / "fixture" / "evidence"
GRAPH = REPO / "challenges" / "example" / "fixture" / "graphs" / "backfilled.json"


class Counting:
    """The real embedder, counting the texts it was asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.texts = 0

    def embed(self, texts: list[str]) -> Sequence[Sequence[float]]:
        self.texts += len(texts)
        return self.inner.embed(texts)


def _state_fingerprint(path: Path) -> str:
    conn = connect(path)
    try:
        return fingerprint(conn)
    finally:
        conn.close()


def test_a_seen_corpus_is_not_embedded_again_and_the_state_is_the_same_either_way(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    evidence = [(p.relative_to(EVIDENCE).as_posix(), p.read_bytes()) for p in EVIDENCE.rglob("*.md")]
    pool = pool_documents(DistractorPool(seed=1, size=30, generator=PoolGenerator.OTHER_PROJECTS), 30)
    for path, data in evidence + pool:
        (corpus / path).parent.mkdir(parents=True, exist_ok=True)
        (corpus / path).write_bytes(data)
    documents = read_corpus(corpus)
    embedder = Counting(require_embedder())
    cache = tmp_path / "cache" / "vectors.sqlite"
    build_state(tmp_path / "cold.sqlite", documents, GRAPH, embedder, cache)
    cold = embedder.texts
    passages = sqlite3.connect(tmp_path / "cold.sqlite").execute("SELECT count(*) FROM passage").fetchone()[0]
    assert 0 < cold <= passages  # a text two passages share is embedded once
    build_state(tmp_path / "warm.sqlite", documents, GRAPH, embedder, cache)
    assert embedder.texts == cold  # the second restore embedded nothing
    build_state(tmp_path / "none.sqlite", documents, GRAPH, embedder, None)
    assert embedder.texts == cold + passages
    prints = {_state_fingerprint(tmp_path / f"{name}.sqlite") for name in ("cold", "warm", "none")}
    assert len(prints) == 1


def test_the_cache_answers_each_text_in_order_and_embeds_a_repeated_text_once(tmp_path: Path) -> None:
    embedder = Counting(require_embedder())
    texts = ["ledger columns", "household spreadsheet", "ledger columns"]
    first = embed_cached(embedder, texts, tmp_path / "v.sqlite")
    assert embedder.texts == 2 and first[0] == first[2] and first[0] != first[1]
    assert embed_cached(embedder, list(reversed(texts)), tmp_path / "v.sqlite") == list(reversed(first))
    assert embedder.texts == 2
