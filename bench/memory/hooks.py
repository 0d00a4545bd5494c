"""``python -m bench.memory.hooks prompt|recall --state FILE``: the Claude Code hooks, run from the package.

Inside an agent's container the same program runs as a copied standalone file (see :mod:`bench.memory.install`);
this entry point exists so the hooks can be driven by hand and in tests with the package's name.
"""

from __future__ import annotations

import sys

from .recall import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
