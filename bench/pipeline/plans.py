"""Plan specs: a file (``manifests/plans/*.json``) naming a plan builder and its arguments, made into a plan.

The builders are given by the layer that composes the pipeline, so `dodo.py` stays one generic loop and nothing
here names a module above it. The plan a builder returns is checked against the catalogue before doit sees it.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pydantic

from ..builder.catalogue import Catalogue
from ..contracts.strict_json import read_json_object
from ..errors import ContractError
from ..store import Store
from .check import check_plan
from .plan import Plan

__all__ = ["PlanBuilderFunction", "build_plan", "load_plan"]

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
    return build_plan(spec, f"plan spec {spec_path}", store, builders, catalogue, overrides)


def build_plan(
    spec: Mapping[str, Any],
    where: str,
    store: Store,
    builders: Mapping[str, PlanBuilderFunction],
    catalogue: Catalogue,
    overrides: Mapping[str, Any] | None = None,
) -> Plan:
    """The checked plan of a spec (``{"builder": NAME, "args": {...}, "base": DIR}``); ``where`` names it."""
    named, given, base_named = spec.get("builder"), spec.get("args", {}), spec.get("base", ".")
    builder = builders.get(named) if isinstance(named, str) else None
    if builder is None:
        raise ContractError(f"{where}: 'builder' must be one of {sorted(builders)}", field="builder")
    if not isinstance(given, dict):
        raise ContractError(f"{where}: 'args' must be an object of the plan's arguments", field="args")
    if not isinstance(base_named, str):
        raise ContractError(f"{where}: 'base' must be a directory's path", field="base")
    args = {**given, **(overrides or {})}
    args = _arguments(builder, str(named), args, where)
    plan = builder(Path(base_named), store, **args)
    check_plan(plan, catalogue, store)
    return plan


def _arguments(builder: PlanBuilderFunction, name: str, given: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``given`` checked against ``builder``'s signature (past ``base`` and ``store``): every argument it needs, none
    it does not take, each of its annotated type; a refusal names the first field that is wrong."""
    hints = typing.get_type_hints(builder)
    fields: dict[str, Any] = {
        parameter: (hints.get(parameter, Any), ... if spec.default is inspect.Parameter.empty else spec.default)
        for parameter, spec in inspect.signature(builder).parameters.items()
        if parameter not in ("base", "store")
    }
    model = pydantic.create_model(f"{name}-plan-arguments", __config__=pydantic.ConfigDict(extra="forbid"), **fields)
    try:
        parsed = model.model_validate(dict(given))
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "args"
        raise ContractError(
            f"{where}: the {name!r} plan's argument {field!r}: {first['msg']} (it takes: {', '.join(fields)})",
            field=field,
        ) from None
    return {parameter: getattr(parsed, parameter) for parameter in fields}
