"""The code digest of a stage: the package source it runs, so a code change invalidates exactly its actions.

The closure is found by reading import statements (no import side effects): the stage's module plus every
package module it imports, transitively. Editing a module no stage imports invalidates nothing.

Parsing a closure's 34 modules took 38-44 ms of every process that derives an action key (a tenth of a no-op
rerun's own time), so what a module's source imports is remembered on this machine under the cache
(:func:`~bench.machine_cache.cache_root`), named by the BLAKE3 of the Python version, the module's name and its
exact bytes: an edited module is a new name, parsed again. A remembered list that cannot be read whole (absent,
unreadable, cut short, a line that is no module name) is parsed again and written anew; nothing else is trusted.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..contracts import Digest
from ..contracts.digests import blake3_hex
from ..machine_cache import cache_root
from ..store import Store
from ..store.actions import CodeManifest

__all__ = ["code_manifest", "store_code_manifest"]

PACKAGE = "bench"
PACKAGE_ROOT = Path(__file__).resolve().parent.parent

_MEMO_FORMAT = "imports 1"  # a remembered import list's first line; a new format is a new name
_MEMO_END = "end"
_MODULE_NAME = re.compile(rf"{PACKAGE}(?:\.[A-Za-z_][A-Za-z0-9_]*)*", re.ASCII)

# Code digests already stored, per store and module, for this process (the source does not change under it).
_stored: dict[tuple[str, str], Digest] = {}


@functools.cache
def _module_file(module: str) -> Path | None:
    """The file of package module ``module``, or None (most names an import lists are a module's attributes). Plain
    strings and one stat each, not paths: a closure asks this of about two thousand names."""
    base = os.path.join(PACKAGE_ROOT, *module.split(".")[1:])
    for candidate in (os.path.join(base, "__init__.py"), f"{base}.py"):
        if os.path.isfile(candidate):
            return Path(candidate)
    return None


@functools.cache
def _source(path: Path) -> bytes:
    """A module's source, read once per process: the stages' closures share most of their modules, and reading
    each closure's files anew was most of deriving twenty code digests."""
    return path.read_bytes()


@functools.cache
def _imports(module: str, path: Path) -> frozenset[str]:
    """Package modules named by the import statements of ``module`` (and their parent packages)."""
    source = _source(path)
    is_package = path.name == "__init__.py"
    memo = _memo_path(module, is_package, source)
    named = _remembered(memo)
    if named is None:
        named = _parsed_imports(module, is_package, source, path)
        _remember(memo, named)
    return frozenset(name for name in named if _module_file(name) is not None)


def _parsed_imports(module: str, is_package: bool, source: bytes, path: Path) -> frozenset[str]:
    found: set[str] = set()
    for node in _statements(ast.parse(source, filename=str(path)).body):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == PACKAGE:
                found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return frozenset(found)


def _memo_path(module: str, is_package: bool, source: bytes) -> Path:
    named = f"{_MEMO_FORMAT}\0{sys.version}\0{module}\0{is_package}\0".encode()
    return cache_root() / "imports" / f"{blake3_hex(named + source)}.txt"


def _remembered(memo: Path) -> frozenset[str] | None:
    """The names ``memo`` lists, or None unless it reads whole: its header, module names, its end line."""
    try:
        lines = memo.read_text(encoding="ascii").split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    if len(lines) < 3 or lines[0] != _MEMO_FORMAT or lines[-2:] != [_MEMO_END, ""]:
        return None
    names = lines[1:-2]
    if not all(_MODULE_NAME.fullmatch(name) for name in names):
        return None
    return frozenset(names)


def _remember(memo: Path, names: Iterable[str]) -> None:
    """Write ``memo`` whole or not at all (a temporary file renamed over it); a cache that cannot be written
    only means parsing again next time."""
    text = "\n".join([_MEMO_FORMAT, *sorted(names), _MEMO_END, ""])
    with contextlib.suppress(OSError):
        memo.parent.mkdir(parents=True, exist_ok=True)
        handle, partial = tempfile.mkstemp(dir=memo.parent, prefix=f".{memo.stem}.", suffix=".partial")
        try:
            with os.fdopen(handle, "w", encoding="ascii") as stream:
                stream.write(text)
            os.replace(partial, memo)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(partial)


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement in ``body`` and in the statement blocks nested in it. An import is a statement, so this
    finds every import while skipping the expressions, most of a module's nodes (a no-op rerun derives each
    stage's code digest, and walking every node was most of that)."""
    pending = list(body)
    while pending:
        node = pending.pop()
        yield node
        for block in ("body", "orelse", "finalbody"):
            pending.extend(getattr(node, block, ()))
        for handler in getattr(node, "handlers", ()):
            pending.extend(handler.body)
        for case in getattr(node, "cases", ()):
            pending.extend(case.body)


@functools.cache
def code_manifest(module: str) -> dict[str, bytes]:
    """Source text of ``module`` and of every package module it imports, by module name."""
    sources: dict[str, bytes] = {}
    pending = [module]
    while pending:
        name = pending.pop()
        path = _module_file(name)
        if name in sources or path is None:
            continue
        sources[name] = _source(path)
        pending.extend(_imports(name, path) - sources.keys())
    return dict(sorted(sources.items()))


def store_code_manifest(store: Store, module: str) -> Digest:
    """Store the source blobs and the manifest naming them; the manifest's digest is the code digest."""
    known = _stored.get((store.location, module))
    if known is not None and store.has(known):
        return known
    with store.batch():
        blobs = {name: store.put_bytes(text) for name, text in code_manifest(module).items()}
        digest = store.put_document(CodeManifest(modules=blobs))
    _stored[(store.location, module)] = digest
    return digest
