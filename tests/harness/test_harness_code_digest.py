"""A stage's code digest covers the harness code it runs, although the registry imports each harness by name.

bench/builder/code_digest.py finds a stage's code by its import statements; the registry's lazy import is none, so a
change to a harness's package would otherwise leave every cached action of it standing (seen: a change to
Codex's tool-output framing re-ran nothing, and verification then re-derived other pages).
"""

from __future__ import annotations

from pathlib import Path

import bench.harness
from bench.builder.code_digest import PACKAGE_ROOT, code_manifest


def _modules(package: str) -> set[str]:
    root = PACKAGE_ROOT / Path(*package.split(".")[1:])
    return {
        ".".join([package, *path.relative_to(root).with_suffix("").parts]).removesuffix(".__init__")
        for path in root.rglob("*.py")
    }


def test_every_registered_harness_package_is_in_the_code_of_the_stages_that_run_it() -> None:
    for stage in ("bench.stages.paired_attempt", "bench.stages.grade", "bench.stages.view"):
        closure = set(code_manifest(stage))
        for package, _ in bench.harness._REGISTRY.values():
            assert _modules(package) <= closure, (stage, package, sorted(_modules(package) - closure))
