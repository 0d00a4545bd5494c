"""The public contracts, by name: what `stele-bench schema` exports for third parties to validate against.

Each module listed here defines ``PUBLIC_CONTRACTS``, a tuple of model classes; a contract's name is its class
name in kebab case (``ActionResult`` -> ``action-result``).
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from pydantic import BaseModel

from ..errors import ContractError

__all__ = ["contract_name", "json_schema", "public_contracts"]

CONTRACT_MODULES: tuple[str, ...] = (
    "bench.store.trees",
    "bench.store.actions",
    "bench.pipeline.plan",
    "bench.stages.demo",
    "bench.fence.config",
    "bench.fence.caps",
    "bench.fence.records",
    "bench.analysis.records",
    "bench.analysis.admission",
    "bench.analysis.prereg",
    "bench.analysis.summary",
    "bench.publish.manifest",
    "bench.provision.messages",
    "bench.provision.fixture",
    "bench.provision.receipt",
    "bench.suite.suite",
    "bench.packaging",
    "bench.agent.records",
    "bench.agent.grading",
)


def contract_name(model: type[BaseModel]) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", model.__name__).lower()


def public_contracts() -> dict[str, type[BaseModel]]:
    contracts: dict[str, type[BaseModel]] = {}
    for module in CONTRACT_MODULES:
        for model in importlib.import_module(module).PUBLIC_CONTRACTS:
            contracts[contract_name(model)] = model
    return dict(sorted(contracts.items()))


def json_schema(name: str) -> dict[str, Any]:
    contracts = public_contracts()
    if name not in contracts:
        raise ContractError(f"no public contract is named {name!r}; known: {', '.join(contracts)}")
    return contracts[name].model_json_schema()
