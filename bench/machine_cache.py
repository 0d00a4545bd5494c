"""Where this machine keeps what stele-bench can always rebuild: image inputs, parsed import lists.

``$STELE_BENCH_CACHE``, else ``$XDG_CACHE_HOME/stele-bench``, else ``~/.cache/stele-bench``. Nothing in it is a
result: deleting it costs time, never an answer.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CACHE_VARIABLE", "cache_root"]

CACHE_VARIABLE = "STELE_BENCH_CACHE"


def cache_root() -> Path:
    """The cache's root directory (made by whoever first writes below it)."""
    configured = os.environ.get(CACHE_VARIABLE)
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "stele-bench"
