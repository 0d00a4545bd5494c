"""Hostile things to hand a command where it expects a file or a directory, made once in a directory of their own.

Each is named for what it is: a FIFO (an open blocks, a read waits for ever), a link to ``/dev/zero`` (reads for
ever), a link to a character device, a symlink loop, a sparse file far past any document's size, an empty file,
random bytes, JSON nested past any depth, JSON with numbers past 64 bits and past a float, a name that is not
UTF-8, a directory where a file is expected, and a directory whose document is each of those.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DOCUMENT_NAMES", "SPECIAL", "make_hostile"]

SPECIAL = (
    "fifo",
    "zero",
    "null",
    "loop",
    "big",
    "empty",
    "random",
    "deep.json",
    "huge.json",
    "surrogate.json",
    "not-utf8",
    "dir",
    "missing",
)
# Names commands look for inside a directory they are given (a suite, a fixture, a bundle, a challenge, a project).
DOCUMENT_NAMES = ("suite.json", "fixture.json", "MANIFEST.json", "challenge.json", "stele-bench.toml")


def _special(root: Path, name: str) -> None:
    path = root / name
    if name == "fifo":
        os.mkfifo(path)
    elif name == "zero":
        path.symlink_to("/dev/zero")
    elif name == "null":
        path.symlink_to("/dev/null")
    elif name == "loop":
        path.symlink_to(name)  # a link to itself
    elif name == "big":
        with path.open("wb") as handle:
            handle.truncate(200 * 1024 * 1024)  # sparse: no disk, 200 MB to a reader
    elif name == "empty":
        path.write_bytes(b"")
    elif name == "random":
        path.write_bytes(bytes(range(256)) * 64)
    elif name == "deep.json":
        path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    elif name == "huge.json":
        path.write_bytes(b'{"a": 1' + b"0" * 5000 + b', "b": 1e400, "c": -1' + b"0" * 30 + b"}")
    elif name == "surrogate.json":
        path.write_bytes(b'{"a": "\\ud800", "a": 1}')
    elif name == "not-utf8":
        (root / os.fsdecode(b"not-utf8-\xff\xfe")).write_bytes(b"{}")
        path.symlink_to(os.fsdecode(b"not-utf8-\xff\xfe"))
    elif name == "dir":
        path.mkdir()
    # "missing": nothing at all


def make_hostile(root: Path) -> Path:
    """Every hostile thing in ``root``, and beside them one directory per kind holding it under every document
    name (``in-fifo/suite.json`` is a FIFO ...)."""
    root.mkdir(parents=True, exist_ok=True)
    for name in SPECIAL:
        _special(root, name)
        holder = root / f"in-{name}"
        holder.mkdir()
        for document in DOCUMENT_NAMES:
            if name == "loop":
                (holder / document).symlink_to(document)
            elif name not in ("missing", "not-utf8"):
                (holder / document).symlink_to(root / name)
    return root
