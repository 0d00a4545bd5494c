"""Nothing outside bench/harness/ names a harness's files, formats or environment variables.

A harness's knowledge lives in its package behind bench/harness/base.py; everywhere else asks the harness. Read
with ``ast``: every string constant of every module outside bench/harness/ (docstrings aside: prose may say which
harness a fact was measured on), against the names a harness's files, formats and variables carry. The few
legitimate exceptions are listed with the reason each is not a harness's.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
HARNESS_NAMES = re.compile(
    r"\.claude|CLAUDE\.md|claude|CLAUDE_|ANTHROPIC_|codex|CODEX_|\.codex|AGENTS\.md|system-reminder", re.IGNORECASE
)
# module (or package folder, ending in /) -> why its constants may name a harness
ALLOWED = {
    "harness/": "the harnesses themselves",
    "packaging/patterns.py": "every coding agent's project context files (harness or not), refused in any corpus",
    "suite/memory_system.py": "every model provider's variable prefixes (harness or not), kept from memory tools",
    "scaffold/skeleton.py": "a new suite's default model name, a provider's model and not a harness",
}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _hits(source: str) -> list[tuple[int, str]]:
    """(line, constant) of every string constant of ``source`` that names a harness, docstrings aside."""
    tree = ast.parse(source)
    prose = _docstrings(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in prose
        and HARNESS_NAMES.search(node.value)
    ]


def _named(path: Path) -> list[str]:
    return [f"{path.relative_to(BENCH.parent)}:{line}: {value[:60]!r}" for line, value in _hits(path.read_text())]


def _allowed(path: Path) -> bool:
    relative = path.relative_to(BENCH).as_posix()
    return any(relative == allowed or (allowed.endswith("/") and relative.startswith(allowed)) for allowed in ALLOWED)


def test_no_module_outside_the_harnesses_names_a_harness_s_files_formats_or_variables() -> None:
    named = [hit for path in sorted(BENCH.rglob("*.py")) if not _allowed(path) for hit in _named(path)]
    assert not named, "ask the harness (bench/harness/base.py) instead:\n" + "\n".join(named)


def test_every_allowed_exception_still_names_one() -> None:
    """An exception that no longer names a harness is removed from the list: the list stays short and true."""
    for allowed in ALLOWED:
        paths = sorted((BENCH / allowed).rglob("*.py")) if allowed.endswith("/") else [BENCH / allowed]
        assert any(_named(path) for path in paths), f"{allowed} names no harness any more: drop it from ALLOWED"


@pytest.mark.parametrize(
    "source",
    [
        'PATH = "~/.claude/settings.json"\n',
        'ENV = {"ANTHROPIC_BASE_URL": url}\n',
        'MARK = "<system-reminder>"\n',
        'HOME = "CODEX_HOME"\n',
        'FILE = f"{root}/AGENTS.md"\n',
    ],
)
def test_the_check_sees_a_harness_name_in_code_and_not_in_a_docstring(source: str) -> None:
    assert len(_hits('"""A module docstring may say Claude Code."""\n' + source)) == 1


def _imports(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    """(line, absolute module) of every import of a module at ``path`` (its text, or ``source`` in its place)."""
    package = ".".join(path.relative_to(BENCH.parent).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text() if source is None else source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            found.append((node.lineno, f"{base}.{node.module}" if node.module else base))
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, node.module or ""))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def test_the_harness_layer_imports_only_the_contracts_the_errors_and_itself() -> None:
    """So that every other layer (gateway, agent, grading, sandbox, publish) may import it."""
    allowed = ("bench.contracts", "bench.errors", "bench.harness")
    found = [
        f"{path.relative_to(BENCH.parent)}:{line}: {module}"
        for path in sorted((BENCH / "harness").rglob("*.py"))
        for line, module in _imports(path)
        if module.startswith("bench") and not module.startswith(allowed)
    ]
    assert not found, found


# Grading reads the gateway's neutral conversation (bench.gateway.recorded reads each exchange in the dialect it was
# recorded in) and asks the arm's harness through its base contract: never a dialect, never one harness's package.
_GRADING_REFUSED = re.compile(r"^bench\.gateway\.dialects(\.|$)|^bench\.harness\.(?!base$|transcript$)")


def _grading_refusals(path: Path, source: str | None = None) -> list[str]:
    return [
        f"{path.relative_to(BENCH.parent)}:{line}: {module}"
        for line, module in _imports(path, source)
        if _GRADING_REFUSED.match(module)
    ]


def test_grading_imports_no_gateway_dialect_and_no_harness_of_its_own() -> None:
    found = [hit for path in sorted((BENCH / "grading").rglob("*.py")) for hit in _grading_refusals(path)]
    assert not found, "read bench.gateway.recorded's neutral conversation and ask the harness instead:\n" + "\n".join(
        found
    )


@pytest.mark.parametrize(
    "source",
    [
        "from ..gateway.dialects.anthropic import offered_tools\n",
        "from ..gateway.dialects import dialect_of\n",
        "from ..harness.codex.injected import injected_parts\n",
        "import bench.harness.claude_code.injection\n",
    ],
)
def test_the_grading_check_sees_a_dialect_or_a_harness_s_own_module(source: str) -> None:
    assert len(_grading_refusals(BENCH / "grading" / "chain.py", source)) == 1
