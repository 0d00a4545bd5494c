"""Public contracts by name: what `stele-bench schema` exports for third parties to validate against.

A contract's name is its class name in kebab case (``ActionResult`` -> ``action-result``), or its schema title's
when the model sets one (the gateway's ``Policy`` is titled ``ModelPolicy``, as its documents' kind says). Which
contracts are public is decided by the layer that composes the pipeline (it lists each module's
``PUBLIC_CONTRACTS``), so this bottom layer names no module above it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from ..errors import ContractError

__all__ = ["ContractRegistry", "contract_name"]


def contract_name(model: type[BaseModel]) -> str:
    title = model.model_config.get("title")
    return re.sub(r"(?<!^)(?=[A-Z])", "-", title or model.__name__).lower()


class ContractRegistry:
    """Contract models by their kebab-case names; two models may not share a name."""

    def __init__(self, models: Iterable[type[BaseModel]]) -> None:
        self._models: dict[str, type[BaseModel]] = {}
        for model in models:
            name = contract_name(model)
            if self._models.get(name, model) is not model:
                raise ContractError(f"two public contracts are named {name!r}: rename one of them")
            self._models[name] = model
        self._models = dict(sorted(self._models.items()))

    def names(self) -> list[str]:
        return list(self._models)

    def models(self) -> dict[str, type[BaseModel]]:
        return dict(self._models)

    def json_schema(self, name: str) -> dict[str, Any]:
        model = self._models.get(name)
        if model is None:
            raise ContractError(f"no public contract is named {name!r}; known: {', '.join(self._models)}")
        return model.model_json_schema()
