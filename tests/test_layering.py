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


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def room_of(module: str) -> str | None:
    """The package (or root module) of a ``bench`` module: ``bench.store.trees`` -> ``store``."""
    parts = module.split(".")
    return parts[1] if parts[0] == "bench" and len(parts) > 1 else None


def bench_modules() -> dict[str, Path]:
    """Every bench module by its dotted name."""
    return {module_name(path): path for path in BENCH.rglob("*.py")}


def imported_modules(path: Path, module: str, modules: set[str]) -> list[tuple[int, str]]:
    """The bench modules ``module`` imports, each with the line of its import. ``from PACKAGE import module`` is an
    arrow to that module only: it needs the package's face no more than ``import PACKAGE.module`` does."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            prefix = ".".join(base[: len(base) - node.level + 1]) if node.level else ""
            target = ".".join(part for part in (prefix, node.module or "") if part)
            targets = {f"{target}.{alias.name}" for alias in node.names} & modules
            if len(targets) < len(node.names):  # a name the package's face defines, not a module
                targets.add(target)
        else:
            continue
        found.extend((node.lineno, name) for name in sorted(targets) if name in modules and name != module)
    return found


def _arrows() -> dict[str, set[str]]:
    """Every bench module and the bench modules it imports."""
    paths = bench_modules()
    return {module: {name for _, name in imported_modules(path, module, set(paths))} for module, path in paths.items()}


def test_every_package_and_root_module_has_a_layer() -> None:
    placed = {name for row in layers() for name in row}
    rooms = {room_of(module_name(path)) for path in BENCH.rglob("*.py")} - {None, "__main__"}
    assert rooms - placed == set(), "name each new package or root module in ARCHITECTURE.md's Layering block"
    assert placed - rooms == set(), "ARCHITECTURE.md's Layering block names a package that does not exist"


def test_no_package_imports_its_own_line_or_above() -> None:
    level = {name: height for height, row in enumerate(layers()) for name in row}
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in _arrows().items()
        for target in targets
        if (source := room_of(module)) in level
        and (room := room_of(target)) in level
        and room != source
        and level[room] >= level[source]
    )
    assert upward == []


def test_the_sandbox_seam_imports_only_contracts_store_project_and_errors() -> None:
    """The engine seam carries its own types (``NetworkMode``, ``SandboxEnvironment``): it names no suite, image
    recipe or stage, so a backend can be written, and the seam read, without them. ``project`` (the project file's
    reader, on the store's floor, itself importing only contracts and errors) is where the configured backend is
    named (``[sandbox] backend``)."""
    allowed = {"sandbox", "contracts", "store", "project", "errors", *layers()[0]}
    outside = sorted(
        f"{module} -> {target}"
        for module, targets in _arrows().items()
        if room_of(module) == "sandbox"
        for target in targets
        if room_of(target) not in allowed
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
