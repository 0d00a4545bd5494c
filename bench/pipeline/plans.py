"""Plan builders: from a plan spec file (``manifests/plans/*.json``) to a :class:`Plan`.

A spec names its builder and the builder's arguments, so `dodo.py` stays one generic loop.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ContractError
from ..stages.demo import directory_fingerprint
from .plan import Invocation, Plan, Upstream

__all__ = ["BUILDERS", "directory_summaries", "load_plan"]


def directory_summaries(base: Path, directories: list[str]) -> Plan:
    """For each directory: hash it into a tree, then summarise the tree."""
    invocations: list[Invocation] = []
    for directory in directories:
        path = base / directory
        if not path.is_dir():
            raise ContractError(f"plan input {directory!r} is not a directory under {base}")
        label = directory.replace("/", "-")
        invocations.append(
            Invocation(
                name=f"tree-{label}",
                stage="directory-tree",
                params={"directory": str(path), "fingerprint": directory_fingerprint(path)},
            )
        )
        invocations.append(
            Invocation(
                name=f"summary-{label}",
                stage="tree-summary",
                params={},
                inputs={"tree": Upstream(invocation=f"tree-{label}", output="tree")},
            )
        )
    return Plan(invocations=tuple(invocations))


BUILDERS: dict[str, Callable[..., Plan]] = {"directory-summaries": directory_summaries}


def load_plan(spec_path: Path) -> Plan:
    """Build the plan a spec file describes; paths in the spec are relative to the spec's repository root."""
    try:
        spec: dict[str, Any] = json.loads(spec_path.read_text())
    except FileNotFoundError:
        raise ContractError(f"plan spec {spec_path} does not exist") from None
    except json.JSONDecodeError as exc:
        raise ContractError(f"plan spec {spec_path} is not JSON: {exc}") from exc
    builder = BUILDERS.get(spec.get("builder", ""))
    if builder is None:
        raise ContractError(f"plan spec {spec_path}: 'builder' must be one of {sorted(BUILDERS)}")
    base = Path(spec.get("base", "."))
    return builder(base, **spec.get("args", {}))
