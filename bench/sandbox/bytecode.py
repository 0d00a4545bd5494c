"""Bytecode cannot stand in for its source: a compiled file the agent changed while its source stayed as it was.

Python imports a module from ``__pycache__/<name>.cpython-XY.pyc`` when that file's header matches its source's
size and time, and the workspace goes into every container with the same times, so an agent can fix a module by
rewriting its bytecode alone, under an allowlisted ``__pycache__``, and leave the source untouched. The verifier
runs without reading or writing bytecode (:mod:`.verify`); the audit also treats a changed ``.pyc`` as a change to
its source: a ``.pyc`` the start tree held, rewritten while its source was not, is a violation wherever it sits.
A new ``.pyc`` is not: Python writes one for every module it imports the first time (a prebuild's ``compileall``,
the agent's own test run), so the audit cannot tell it from a crafted one; the verifier never reads it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import PurePosixPath

from ..contracts import Digest, PortablePath
from ..store import EntryKind, Store, walk_tree

__all__ = ["source_of", "stale_bytecode"]

_CACHED = re.compile(r"^(?P<name>[^.]+)\.[A-Za-z0-9_-]+(?:\.opt-[0-9]+)?\.pyc$")


def source_of(path: str) -> str | None:
    """The source a ``.pyc`` file compiles (``pkg/__pycache__/m.cpython-311.pyc`` -> ``pkg/m.py``), or None when
    ``path`` is no bytecode file."""
    pure = PurePosixPath(path)
    if pure.suffix != ".pyc":
        return None
    if pure.parent.name == "__pycache__":
        cached = _CACHED.match(pure.name)
        name = cached["name"] if cached else pure.name.split(".", 1)[0]
        return str(pure.parent.parent / f"{name}.py")
    return str(pure.with_suffix(".py"))


def _files(store: Store, path: str, kind: EntryKind, digest: Digest | None) -> Iterator[str]:
    """``path`` itself, or every file below it when it is a directory."""
    if digest is None:
        return
    if kind is not EntryKind.DIRECTORY:
        yield path
        return
    for inner, entry in walk_tree(store, digest, prefix=f"{path}/"):
        if entry.kind is not EntryKind.DIRECTORY:
            yield str(inner)


def stale_bytecode(
    store: Store, written: Iterable[tuple[str, EntryKind, Digest | None]], rewritten: Iterable[str]
) -> list[PortablePath]:
    """The ``.pyc`` files among ``rewritten`` (files the start tree held whose content changed) whose source is not
    among ``written`` (each path added or changed, with its kind and digest after)."""
    changed = {file for path, kind, digest in written for file in _files(store, path, kind, digest)}
    return [PortablePath(f) for f in rewritten if (source := source_of(f)) is not None and source not in changed]
