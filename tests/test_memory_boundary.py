"""The reference memory is declared like any other system: no module outside ``bench/memory`` imports it.

The runner reaches a memory system only through its provisioner's argv prefix and its suite declaration, so the
bundled one must not be special. Imports are read with ``ast`` (absolute and relative, ``import`` and ``from``), so
a string that merely mentions the package does not count and an import spelled any way does.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
MEMORY = "bench.memory"


def _module_name(path: Path) -> str:
    parts = path.relative_to(BENCH.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module the source of ``module`` imports, relative imports resolved against its own package."""
    package = module if is_package else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            prefix = ".".join(base[: len(base) - node.level + 1]) if node.level else ""
            target = ".".join(part for part in (prefix, node.module or "") if part)
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


def _reaches_memory(module: str) -> bool:
    return module == MEMORY or module.startswith(MEMORY + ".")


def test_no_module_outside_bench_memory_imports_it() -> None:
    offenders = {}
    for path in sorted(BENCH.rglob("*.py")):
        module = _module_name(path)
        if not _reaches_memory(module):
            imports = imported_modules(path.read_text(encoding="utf-8"), module, path.name == "__init__.py")
            offenders[str(path.relative_to(BENCH.parent))] = sorted(m for m in imports if _reaches_memory(m))
    assert {path: found for path, found in offenders.items() if found} == {}


@pytest.mark.parametrize(
    ("source", "module"),
    [
        ("import bench.memory.install\n", "bench.agent.x"),
        ("from bench.memory import hook_settings\n", "bench.agent.x"),
        ("from ..memory.provisioner import state_path\n", "bench.agent.x"),
        ("from .. import memory\n", "bench.agent.x"),
        ("from ...memory import recall\n", "bench.sandbox.backends.x"),
    ],
)
def test_the_scan_sees_every_spelling_of_the_import(source: str, module: str) -> None:
    assert any(_reaches_memory(found) for found in imported_modules(source, module))
    assert not any(_reaches_memory(found) for found in imported_modules("from .memory import x\n", module))
