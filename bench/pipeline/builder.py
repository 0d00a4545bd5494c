"""Making a plan from stage declarations: each call returns a handle whose outputs are typed links.

    plan = PlanBuilder()
    corpus = plan.add("corpus", corpus_stage, CorpusParams(...))
    redact = plan.add("redact", redact_stage, RedactParams(...), tree=corpus["tree"])

``corpus["tre"]`` fails at once, naming the invocation, the stage and its outputs. Every input is a keyword naming
a port: a :class:`Link`, a stored digest, or for a dict port a mapping of keys to either. :meth:`PlanBuilder.build`
runs the same check a plan read from JSON gets (:func:`~bench.pipeline.check.check_plan`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..builder.catalogue import Catalogue
from ..builder.stage import SEPARATOR, Ports, Stage
from ..contracts import ContractModel, Digest
from ..errors import PlanError
from ..store import Store
from .check import check_plan
from .plan import Invocation, Plan, Upstream
from .run_actions import run_actions_port

__all__ = ["Handle", "Link", "PlanBuilder"]

O = TypeVar("O", bound=Ports)  # noqa: E741 - the outputs type, as in bench.builder.stage


@dataclass(frozen=True)
class Link:
    """One declared output of one invocation, with the digest type its stage declares for it."""

    invocation: str
    output: str
    kind: type[Digest]


@dataclass(frozen=True)
class Handle(Generic[O]):
    """An added invocation; index it by output name to wire that output into another invocation."""

    name: str
    stage: Stage[Any, Any, O]

    def __getitem__(self, output: str) -> Link:
        """The link to ``output``: a port's name, or ``port/key`` for one entry of a dict port."""
        field, _, key = output.partition(SEPARATOR)
        port = self.stage.outputs.ports().get(field)
        if port is None or port.many != bool(key):
            declared = (
                ", ".join(
                    f"{p.name}{SEPARATOR}<key>" if p.many else p.name for p in self.stage.outputs.ports().values()
                )
                or "none"
            )
            raise PlanError(
                self.name, output, f"is not an output of stage {self.stage.name!r} (it declares: {declared})"
            )
        return Link(self.name, output, port.kind)


class PlanBuilder:
    """Invocations in the order added; each may use only outputs of those added before it."""

    def __init__(self) -> None:
        self._invocations: list[Invocation] = []
        self._stages: dict[str, Stage[Any, Any, Any]] = {}

    def add(
        self,
        name: str,
        stage: Stage[Any, Any, O],
        params: ContractModel,
        *,
        refs: Mapping[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
        **inputs: Link | Digest | Mapping[str, Link | Digest] | None,
    ) -> Handle[O]:
        """Add an invocation; an input given as None is left out (an optional port the plan does not feed)."""
        if not isinstance(params, stage.params):
            raise PlanError(name, "params", f"must be {stage.params.__name__}, not {type(params).__name__}")
        links: dict[str, Upstream] = {}
        sources: dict[str, Digest] = {}
        for port, value in inputs.items():
            if value is None:
                continue
            entries = (
                {f"{port}{SEPARATOR}{key}": item for key, item in value.items()}
                if isinstance(value, Mapping)
                else {port: value}
            )
            for flat, item in entries.items():
                if isinstance(item, Link):
                    links[flat] = Upstream(invocation=item.invocation, output=item.output)
                else:
                    sources[flat] = item
        self._invocations.append(
            Invocation(
                name=name,
                stage=stage.name,
                params=params.model_dump(mode="json"),
                inputs=links,
                sources=sources,
                refs=dict(refs or {}),
                labels=dict(labels or {}),
                run_actions=run_actions_port(stage.inputs),
            )
        )
        self._stages[stage.name] = stage
        return Handle(name, stage)

    def build(self, store: Store | None = None) -> Plan:
        """The plan, checked against the declarations of the stages it invokes (and the store's sources)."""
        plan = Plan(invocations=tuple(self._invocations))
        check_plan(plan, Catalogue(self._stages.values()), store)
        return plan
