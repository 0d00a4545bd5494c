"""Generate realistic source-like trees for the benchmarks (deterministic for a given seed)."""

from __future__ import annotations

import random
from pathlib import Path

__all__ = ["generate_tree"]

_WORDS = [
    "cache",
    "store",
    "digest",
    "tree",
    "entry",
    "object",
    "module",
    "config",
    "request",
    "response",
    "handler",
    "parser",
    "token",
    "session",
    "worker",
    "queue",
    "index",
    "schema",
    "record",
    "value",
    "result",
    "error",
    "retry",
    "timeout",
    "buffer",
    "stream",
    "socket",
    "client",
    "server",
]


def _text(rng: random.Random, size: int) -> bytes:
    lines: list[str] = []
    total = 0
    while total < size:
        indent = "    " * rng.randint(0, 3)
        line = indent + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 12)))
        lines.append(line)
        total += len(line) + 1
    return ("\n".join(lines) + "\n").encode()[:size]


def generate_tree(root: Path, files: int, total_bytes: int, seed: int = 7) -> int:
    """Write ``files`` files of text totalling about ``total_bytes`` under ``root``; returns bytes written."""
    rng = random.Random(seed)
    mean = total_bytes // files
    written = 0
    for index in range(files):
        directory = root / f"pkg{index % 97:02}" / f"mod{index % 13:02}"
        directory.mkdir(parents=True, exist_ok=True)
        size = max(64, int(rng.expovariate(1 / mean)))
        data = _text(rng, size)
        (directory / f"file{index:05}.py").write_bytes(data)
        written += len(data)
    return written
