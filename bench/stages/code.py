"""The code digest of a stage: the package source it runs, so a code change invalidates exactly its actions.

The closure is found by reading import statements (no import side effects): the stage's module plus every
package module it imports, transitively. Editing a module no stage imports invalidates nothing.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

from ..contracts import Digest
from ..store import Store
from ..store.actions import CodeManifest

__all__ = ["code_manifest", "store_code_manifest"]

PACKAGE = "bench"
PACKAGE_ROOT = Path(__file__).resolve().parent.parent

# Code digests already stored, per store and module, for this process (the source does not change under it).
_stored: dict[tuple[str, str], Digest] = {}


@functools.cache
def _module_file(module: str) -> Path | None:
    parts = module.split(".")[1:]
    if not parts:
        return PACKAGE_ROOT / "__init__.py"
    relative = Path(*parts)
    for candidate in (PACKAGE_ROOT / relative / "__init__.py", PACKAGE_ROOT / relative.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


@functools.cache
def _imports(module: str, path: Path) -> frozenset[str]:
    """Package modules named by the import statements of ``module`` (and their parent packages)."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in _statements(ast.parse(path.read_bytes(), filename=str(path)).body):
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
    return frozenset(name for name in found if _module_file(name) is not None)


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
        sources[name] = path.read_bytes()
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
