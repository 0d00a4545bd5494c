"""Each package's face: the few modules other packages may import.

The faces are ARCHITECTURE.md's "Faces" block, read from the document like the layering block: one line per
package, the package and then its public modules (``backends.choice`` for a module of a subpackage). A package
with no module listed is imported only through its ``__init__``, whose names tests/test_public_names.py pins.
Imports are read by the layering test's walker (inside functions and under ``TYPE_CHECKING`` too).

``python3 -m tests.test_package_faces`` prints today's actual faces as the block's lines, to redraw the block after
modules move.
"""

from __future__ import annotations

import re

import pytest

from tests.test_layering import BENCH, ROOT, bench_modules, imported_modules, room_of

_BLOCK = re.compile(r"## Faces[^\n]*\n.*?```\n(?P<lines>.*?)```", re.DOTALL)
_REDRAW = "python3 -m tests.test_package_faces prints today's faces"

Imports = dict[str, list[tuple[int, str]]]


def declared_faces() -> dict[str, set[str]]:
    """ARCHITECTURE.md's faces: package -> the modules (relative to it) other packages may import."""
    found = _BLOCK.search((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    assert found is not None, "ARCHITECTURE.md has no '## Faces' section with a fenced block of faces"
    faces: dict[str, set[str]] = {}
    for line in found["lines"].splitlines():
        package, _, modules = line.split("(")[0].partition(":")  # a line may end with a remark in parentheses
        if package.strip():
            faces[package.strip()] = {name.strip() for name in modules.split(",") if name.strip()}
    return faces


def packages() -> set[str]:
    """bench's packages (directories of modules; a root module such as ``errors.py`` is its own face)."""
    return {path.parent.relative_to(BENCH).parts[0] for path in BENCH.rglob("*.py") if path.parent != BENCH}


def cross_package_imports() -> Imports:
    """Every bench module and the modules of other packages it imports, each with its line."""
    paths = bench_modules()
    rooms = packages()
    found: Imports = {}
    for module, path in paths.items():
        for line, target in imported_modules(path, module, set(paths)):
            if (package := room_of(target)) in rooms and package != room_of(module):
                found.setdefault(module, []).append((line, target))
    return found


def _inner(target: str) -> tuple[str, str]:
    """``bench.sandbox.backends.choice`` -> (``sandbox``, ``backends.choice``); a package's ``__init__`` -> ``""``."""
    _, package, *inner = target.split(".")
    return package, ".".join(inner)


def violations(imports: Imports, faces: dict[str, set[str]]) -> list[str]:
    """Each import of a module not on its package's face, as ``importer:line imports module``."""
    return sorted(
        f"{importer}:{line} imports {target}, not on {package}'s face"
        for importer, targets in imports.items()
        for line, target in targets
        if (face := _inner(target))[1] and face[1] not in faces.get((package := face[0]), set())
    )


def actual_faces(imports: Imports) -> dict[str, set[str]]:
    """Each package and the modules of it that other packages import today."""
    faces: dict[str, set[str]] = {package: set() for package in packages()}
    for targets in imports.values():
        for _, target in targets:
            package, inner = _inner(target)
            if inner:
                faces[package].add(inner)
    return faces


def faces_block(faces: dict[str, set[str]]) -> str:
    """The block's lines for ``faces``."""
    return "\n".join(
        f"{package}: {', '.join(sorted(modules))}".rstrip(": ") for package, modules in sorted(faces.items())
    )


def test_every_package_has_a_face_line() -> None:
    declared = set(declared_faces())
    assert packages() - declared == set(), f"name each package in ARCHITECTURE.md's Faces block ({_REDRAW})"
    assert declared - packages() == set(), "ARCHITECTURE.md's Faces block names a package that does not exist"


def test_every_face_module_exists() -> None:
    modules = set(bench_modules())
    missing = sorted(
        f"bench.{package}.{inner}"
        for package, face in declared_faces().items()
        for inner in face
        if f"bench.{package}.{inner}" not in modules
    )
    assert missing == [], f"ARCHITECTURE.md's Faces block names modules that do not exist ({_REDRAW})"


def test_other_packages_import_only_a_package_s_face() -> None:
    found = violations(cross_package_imports(), declared_faces())
    assert found == [], (
        "import these through a module on the package's face (or its __init__), or widen the face on purpose in "
        f"ARCHITECTURE.md's Faces block ({_REDRAW}):\n" + "\n".join(found)
    )


@pytest.mark.parametrize(
    ("imports", "expected"),
    [
        (
            {"bench.run.plan": [(3, "bench.store.trees")]},
            ["bench.run.plan:3 imports bench.store.trees, not on store's face"],
        ),
        ({"bench.run.plan": [(3, "bench.store.lookup")]}, []),
        ({"bench.run.plan": [(3, "bench.store")]}, []),
        (
            {"bench.cli.run": [(9, "bench.sandbox.backends.choice")]},
            ["bench.cli.run:9 imports bench.sandbox.backends.choice, not on sandbox's face"],
        ),
    ],
)
def test_the_face_check_finds_what_it_should(imports: Imports, expected: list[str]) -> None:
    assert violations(imports, {"store": {"lookup"}, "sandbox": {"backends"}}) == expected


if __name__ == "__main__":
    print(faces_block(actual_faces(cross_package_imports())))
