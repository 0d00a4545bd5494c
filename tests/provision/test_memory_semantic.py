"""The NumPy all-MiniLM-L6-v2 encoder reproduces sentence-transformers' embeddings and token ids.

``data/minilm_reference.json`` was computed once with sentence-transformers and torch (see its ``source``); those
are not project dependencies, so the values are pinned here instead.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from bench.memory.semantic import MODEL_DIR_ENV, load_embedder, pack_vector, unpack_vector

REFERENCE = json.loads((Path(__file__).parent / "data" / "minilm_reference.json").read_text())
NO_MODEL_OPT_OUT = "STELE_BENCH_NO_EMBEDDING_MODEL"


@pytest.fixture(scope="module")
def embedder():
    loaded, why = load_embedder()
    if loaded is None:
        if os.environ.get(NO_MODEL_OPT_OUT):
            pytest.skip(f"{NO_MODEL_OPT_OUT} is set: the embedding model is absent ({why})")
        pytest.fail(f"no embedding model: {why}")
    return loaded


@pytest.mark.parametrize("case", REFERENCE["cases"], ids=lambda c: c["text"][:24])
def test_token_ids_match_the_reference_tokenizer(embedder, case: dict) -> None:
    assert embedder.tokenizer.encode(case["text"], 256) == case["input_ids"]


@pytest.mark.parametrize("case", REFERENCE["cases"], ids=lambda c: c["text"][:24])
def test_embedding_matches_sentence_transformers(embedder, case: dict) -> None:
    (vector,) = embedder.embed([case["text"]])
    assert len(vector) == 384
    assert max(abs(float(a) - b) for a, b in zip(vector, case["vector"], strict=True)) < 1e-5
    assert math.isclose(sum(float(v) * float(v) for v in vector), 1.0, rel_tol=1e-5)


def test_paraphrase_is_nearer_than_an_unrelated_sentence(embedder) -> None:
    query, paraphrase, unrelated = embedder.embed(
        [
            "retries all arrive at once after an outage",
            "synchronized retry waves hit the recovered service",
            "bake bread",
        ]
    )
    near = sum(float(a) * float(b) for a, b in zip(query, paraphrase, strict=True))
    far = sum(float(a) * float(b) for a, b in zip(query, unrelated, strict=True))
    assert near > far + 0.3


def test_vectors_round_trip_through_the_stored_layout() -> None:
    values = [0.5, -1.25, 3.0e-8]
    assert unpack_vector(pack_vector(values)) == pytest.approx(values, rel=1e-7)


def test_absent_model_says_why(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path))
    loaded, why = load_embedder()
    assert loaded is None
    assert "model.safetensors" in why and "vocab.txt" in why
