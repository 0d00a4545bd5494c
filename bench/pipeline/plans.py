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
from ..store import Store
from .plan import Invocation, Plan, Upstream

__all__ = ["directory_summaries", "load_plan"]


def directory_summaries(base: Path, store: Store, directories: list[str]) -> Plan:
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


def _builders() -> dict[str, Callable[..., Plan]]:
    # Imported here: the suite builder pulls in every stage's package, which a directory plan does not need.
    from ..packaging.plan import packaging_plan
    from ..run.plan import suite_plan

    return {"directory-summaries": directory_summaries, "packaging": packaging_plan, "suite": suite_plan}


def load_plan(spec_path: Path, store: Store, overrides: dict[str, Any] | None = None) -> Plan:
    """Build the plan a spec file describes, with ``overrides`` on its args; every builder takes
    ``(base, store, **args)``, and paths in the spec are relative to ``base`` (default: where doit runs)."""
    try:
        spec: dict[str, Any] = json.loads(spec_path.read_text())
    except FileNotFoundError:
        raise ContractError(f"plan spec {spec_path} does not exist") from None
    except json.JSONDecodeError as exc:
        raise ContractError(f"plan spec {spec_path} is not JSON: {exc}") from exc
    builders = _builders()
    builder = builders.get(spec.get("builder", ""))
    if builder is None:
        raise ContractError(f"plan spec {spec_path}: 'builder' must be one of {sorted(builders)}")
    base = Path(spec.get("base", "."))
    return builder(base, store, **{**spec.get("args", {}), **(overrides or {})})
