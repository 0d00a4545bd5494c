"""A stage is declared once: name, version, kind, params contract and a function from digests to digests."""

from __future__ import annotations

import enum
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from ..contracts import ContractModel, Digest, canonical_json
from ..errors import ContractError, StageError
from ..store import Store

__all__ = ["Stage", "StageKind", "get_stage", "stage"]

P = TypeVar("P", bound=ContractModel)

# Modules that declare stages; imported on demand so `rederive` can find any recorded stage by name.
STAGE_MODULES: tuple[str, ...] = (
    "bench.stages.demo",
    "bench.packaging.corpus",
    "bench.packaging.redact",
    "bench.packaging.certify",
    "bench.publish.stages",
    "bench.sandbox.prebuild",
    "bench.sandbox.audit",
    "bench.sandbox.verifier",
    "bench.sandbox.calibrate",
    "bench.run.record",
    "bench.run.admission",
    "bench.run.bundle",
    "bench.agent.stage",
    "bench.agent.grading",
)


class StageKind(enum.StrEnum):
    """Deterministic stages can be re-derived bit for bit; observed ones (containers, agents) are only recorded."""

    DETERMINISTIC = "deterministic"
    OBSERVED = "observed"


StageFunction = Callable[[Store, Mapping[str, Digest], P], dict[str, Digest]]


@dataclass(frozen=True)
class Stage(Generic[P]):
    name: str
    version: int
    kind: StageKind
    params: type[P]
    run: StageFunction[P]

    @property
    def module(self) -> str:
        return self.run.__module__

    def parse_params(self, raw: Mapping[str, Any]) -> P:
        """Params as a plan or an action key spells them: JSON, so lists fill tuples and strings fill enums."""
        try:
            return self.params.model_validate_json(canonical_json(dict(raw)))
        except ValidationError as exc:
            raise ContractError(f"stage {self.name!r}: bad params: {exc}") from exc


_REGISTRY: dict[str, Stage[Any]] = {}


def stage(name: str, *, version: int, kind: StageKind, params: type[P]) -> Callable[[StageFunction[P]], Stage[P]]:
    """Declare a stage; the decorated function becomes a :class:`Stage`."""

    def declare(function: StageFunction[P]) -> Stage[P]:
        if name in _REGISTRY and _REGISTRY[name].run.__qualname__ != function.__qualname__:
            raise StageError(f"stage {name!r} is declared twice ({_REGISTRY[name].module} and {function.__module__})")
        declared = Stage(name=name, version=version, kind=kind, params=params, run=function)
        _REGISTRY[name] = declared
        return declared

    return declare


def get_stage(name: str) -> Stage[Any]:
    """The stage declared as ``name``, importing the stage modules if needed."""
    if name not in _REGISTRY:
        for module in STAGE_MODULES:
            importlib.import_module(module)
    try:
        return _REGISTRY[name]
    except KeyError:
        raise StageError(f"no stage is named {name!r}; known stages: {', '.join(sorted(_REGISTRY))}") from None
