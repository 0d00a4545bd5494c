"""Plan specs: a file (``manifests/plans/*.json``) naming a plan builder and its arguments, made into a plan.

The builders are given by the layer that composes the pipeline, so `dodo.py` stays one generic loop and nothing
here names a module above it. The plan a builder returns is checked against the catalogue before doit sees it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..contracts.strict_json import read_json_object
from ..errors import ContractError
from ..stages.catalogue import Catalogue
from ..store import Store
from .check import check_plan
from .plan import Plan

__all__ = ["PlanBuilderFunction", "load_plan"]

PlanBuilderFunction = Callable[..., Plan]


def load_plan(
    spec_path: Path,
    store: Store,
    builders: Mapping[str, PlanBuilderFunction],
    catalogue: Catalogue,
    overrides: Mapping[str, Any] | None = None,
) -> Plan:
    """Build the plan a spec file describes, with ``overrides`` on its args; every builder takes
    ``(base, store, **args)``, and paths in the spec are relative to ``base`` (default: where doit runs)."""
    spec = read_json_object(spec_path, "plan spec")
    builder = builders.get(spec.get("builder", ""))
    if builder is None:
        raise ContractError(f"plan spec {spec_path}: 'builder' must be one of {sorted(builders)}")
    base = Path(spec.get("base", "."))
    plan = builder(base, store, **{**spec.get("args", {}), **(overrides or {})})
    check_plan(plan, catalogue, store)
    return plan
