"""The house's layers: which packages may import which, and no import cycle between modules.

The table is ARCHITECTURE.md's "Layering" block, read from the document, so the map and the code cannot drift: a
package may import packages on lower lines only, never one on its own line or above. Imports are read with ``ast``
wherever they stand (module level, inside a function, under ``TYPE_CHECKING``): an import deferred to break a cycle
is still an arrow. Module cycles are looked for over the same arrows, inside packages too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
_BLOCK = re.compile(r"## Layering[^\n]*\n.*?```\n(?P<lines>.*?)```", re.DOTALL)


def layers() -> list[list[str]]:
    """ARCHITECTURE.md's layer lines from the ground up, each a list of package (or root module) names."""
    found = _BLOCK.search((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    assert found is not None, "ARCHITECTURE.md has no '## Layering' section with a fenced block of layers"
    rows = []
    for line in found["lines"].splitlines():
        names = line.split("(")[0]  # a line may end with a remark in parentheses
        rows.append([name.strip() for name in names.split(",") if name.strip()])
    return [row for row in rows if row]


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _room(module: str) -> str | None:
    """The package (or root module) of a ``bench`` module: ``bench.store.trees`` -> ``store``."""
    parts = module.split(".")
    return parts[1] if parts[0] == "bench" and len(parts) > 1 else None


def _imports(path: Path, module: str, modules: set[str]) -> set[str]:
    """The bench modules ``module`` imports. ``from PACKAGE import module`` is an arrow to that module only: it
    needs the package's face no more than ``import PACKAGE.module`` does."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            prefix = ".".join(base[: len(base) - node.level + 1]) if node.level else ""
            target = ".".join(part for part in (prefix, node.module or "") if part)
            submodules = {f"{target}.{alias.name}" for alias in node.names} & modules
            found.update(submodules)
            if len(submodules) < len(node.names):  # a name the package's face defines, not a module
                found.add(target)
    return {name for name in found if name in modules and name != module}


def _arrows() -> dict[str, set[str]]:
    """Every bench module and the bench modules it imports."""
    paths = {_module_name(path): path for path in BENCH.rglob("*.py")}
    return {module: _imports(path, module, set(paths)) for module, path in paths.items()}


def test_every_package_and_root_module_has_a_layer() -> None:
    placed = {name for row in layers() for name in row}
    rooms = {_room(_module_name(path)) for path in BENCH.rglob("*.py")} - {None, "__main__"}
    assert rooms - placed == set(), "name each new package or root module in ARCHITECTURE.md's Layering block"
    assert placed - rooms == set(), "ARCHITECTURE.md's Layering block names a package that does not exist"


def test_no_package_imports_its_own_line_or_above() -> None:
    level = {name: height for height, row in enumerate(layers()) for name in row}
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in _arrows().items()
        for target in targets
        if (source := _room(module)) in level
        and (room := _room(target)) in level
        and room != source
        and level[room] >= level[source]
    )
    assert upward == []


def test_the_sandbox_seam_imports_only_contracts_store_and_errors() -> None:
    """The engine seam carries its own types (``NetworkMode``, ``SandboxEnvironment``): it names no suite, image
    recipe or stage, so a backend can be written, and the seam read, without them."""
    allowed = {"sandbox", "contracts", "store", "errors", *layers()[0]}
    outside = sorted(
        f"{module} -> {target}"
        for module, targets in _arrows().items()
        if _room(module) == "sandbox"
        for target in targets
        if _room(target) not in allowed
    )
    assert outside == []


def _cycles(arrows: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(arrows):
        if start in index:
            continue
        work = [(start, iter(sorted(arrows[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(arrows.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_import_cycle_between_modules() -> None:
    # A package's face importing its own modules is not a cycle unless a module imports the face back.
    assert _cycles(_arrows()) == []


@pytest.mark.parametrize(
    ("arrows", "expected"),
    [
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": set()}, []),
    ],
)
def test_the_cycle_finder_finds_what_it_should(arrows: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert _cycles(arrows) == expected
