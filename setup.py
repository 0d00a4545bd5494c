"""Build hook: the wheel carries the bundled example suite as package data, in ``bench/_example``.

``stele-bench demo`` runs the example from an installed wheel through :func:`bench.project.example_root`; in a
checkout it reads the example where it lies, so an editable install copies nothing. Everything else is declared
in ``pyproject.toml``.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
EXAMPLE = ("challenges/example", "manifests/example", "manifests/plans")


class BuildWithExample(build_py):
    """build_py, then the example suite, its preregistrations and plans copied under the package (modes kept:
    the example's provisioner is an executable)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "bench" / "_example"
        for relative in EXAMPLE:
            ignored = shutil.ignore_patterns("__pycache__", "*.pyc")
            shutil.copytree(ROOT / relative, target / relative, dirs_exist_ok=True, ignore=ignored)


setup(cmdclass={"build_py": BuildWithExample})
