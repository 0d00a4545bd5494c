"""Small modules with one job, short functions: no module under bench/ over 400 lines, no function over 50.

Today's offenders are named below with the reason they still are; the list can only shrink, because an entry that
is no longer over its limit fails too (remove it), and an offender not on the list fails (split it)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODULE_LINES = 400
FUNCTION_LINES = 50

# Module paths, and ``path::qualified.name`` for functions, each with why it is still over.
ALLOWED: dict[str, str] = {}


def function_lengths(path: Path) -> dict[str, int]:
    """Each function's and method's lines, from ``def`` to its last line, by qualified name (``Class.method``,
    ``outer.inner``)."""
    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lengths[name] = (child.end_lineno or child.lineno) - child.lineno + 1
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(), str(path)), "")
    return lengths


@functools.cache  # both tests ask; parsing bench/ takes seconds
def _oversized() -> dict[str, int]:
    """Every module over MODULE_LINES and every function over FUNCTION_LINES under bench/, with its lines."""
    found: dict[str, int] = {}
    for path in sorted((REPO / "bench").rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        lines = len(path.read_text().splitlines())
        if lines > MODULE_LINES:
            found[relative] = lines
        for name, length in function_lengths(path).items():
            if length > FUNCTION_LINES:
                found[f"{relative}::{name}"] = length
    return found


def test_no_module_or_function_is_over_its_limit_unless_named_with_a_reason() -> None:
    unlisted = {name: lines for name, lines in _oversized().items() if name not in ALLOWED}
    assert not unlisted, (
        f"over {MODULE_LINES} lines (module) or {FUNCTION_LINES} (function): {unlisted}; split along a seam"
    )


def test_every_allowed_offender_is_still_over_its_limit() -> None:
    """The list only shrinks: what was split since must leave it."""
    oversized = _oversized()
    fixed = sorted(name for name in ALLOWED if name not in oversized)
    assert not fixed, f"no longer over the limit, remove from ALLOWED: {fixed}"


def test_the_measure_counts_a_function_from_def_to_its_last_line(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(49))
    module = tmp_path / "planted.py"
    module.write_text(
        f"@staticmethod\ndef fits():\n{body}\n\nclass Holder:\n    def over(self):\n{body.replace('    ', '        ')}"
        "        x = 1\n        return x\n"
    )
    lengths = function_lengths(module)
    assert lengths == {"fits": 50, "Holder.over": 52}
