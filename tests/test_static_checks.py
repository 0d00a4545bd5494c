"""CI runs the static checks before the tests, and a type error fails them: `.ci/run` stops at the first failure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_ci_runs_the_checks_before_the_readme_test_command() -> None:
    ci = (REPO / ".ci" / "run").read_text()
    command = next(line for line in ci.splitlines() if "pytest" in line)
    assert command.index("scripts/check.sh") < command.index("pytest")
    assert "set -euo pipefail" in ci and "set -euo pipefail" in (REPO / "scripts" / "check.sh").read_text()
    assert command in (REPO / "README.md").read_text()


def test_a_type_error_fails_the_strict_type_check(tmp_path: Path) -> None:
    """The project's own mypy settings (strict) refuse a planted error; a clean module passes."""
    package = tmp_path / "planted"
    package.mkdir()
    (package / "__init__.py").write_text("def half(value: int) -> int:\n    return value / 2\n")
    config = ["--config-file", str(REPO / "pyproject.toml")]
    bad = subprocess.run([sys.executable, "-m", "mypy", *config, str(package)], capture_output=True, text=True)
    assert bad.returncode == 1 and "Incompatible return value type" in bad.stdout
    (package / "__init__.py").write_text("def half(value: int) -> float:\n    return value / 2\n")
    good = subprocess.run([sys.executable, "-m", "mypy", *config, str(package)], capture_output=True, text=True)
    assert good.returncode == 0, good.stdout
