"""A run plan: stage invocations wired output to input, the data `dodo.py` turns into doit tasks.

Plans are made by :class:`~bench.pipeline.builder.PlanBuilder` from stage declarations, or read from JSON; either
way :func:`~bench.pipeline.check.check_plan` checks every link against the declarations before doit runs.
An input name is the stage's port name, or ``port/key`` for an entry of a dict port, as the action cache records it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import JsonValue, model_validator

from ..contracts import ContractModel, Digest, Document

__all__ = ["PUBLIC_CONTRACTS", "Invocation", "Plan", "Upstream"]


class Upstream(ContractModel):
    """An input taken from another invocation's named output."""

    invocation: str
    output: str


class Invocation(ContractModel):
    name: str
    stage: str
    params: dict[str, JsonValue]
    inputs: dict[str, Upstream] = {}
    sources: dict[str, Digest] = {}  # inputs already in the store when the plan is made
    refs: dict[str, str] = {}  # output name -> ref pointed at it after every run: gc keeps it and its lineage
    labels: dict[str, str] = {}  # what progress lines show besides the stage (challenge, attempt, arm); no effect
    # The port the pipeline fills with the actions of every invocation upstream of this one (a RunActions, from
    # the keys doit holds for them): how a bundle's lineage is exactly its run. None: no such port.
    run_actions: str | None = None

    @property
    def upstream(self) -> set[str]:
        return {link.invocation for link in self.inputs.values()}


class Plan(Document):
    kind: Literal["run-plan"] = "run-plan"
    schema_version: Literal[1] = 1
    invocations: tuple[Invocation, ...]

    @model_validator(mode="after")
    def _wired(self) -> Plan:
        """Every input names an earlier invocation, so the plan is acyclic by construction."""
        seen: set[str] = set()
        for invocation in self.invocations:
            if invocation.name in seen:
                raise ValueError(f"invocation {invocation.name!r} is declared twice")
            missing = invocation.upstream - seen
            if missing:
                raise ValueError(f"invocation {invocation.name!r} takes input from undeclared {sorted(missing)}")
            both = invocation.inputs.keys() & invocation.sources.keys()
            if both:
                raise ValueError(f"invocation {invocation.name!r} gives {sorted(both)} both as a link and a source")
            seen.add(invocation.name)
        return self

    def ancestors(self, name: str) -> list[str]:
        """Every invocation upstream of ``name``, directly or not, sorted."""
        by_name = {invocation.name: invocation for invocation in self.invocations}
        found: set[str] = set()
        pending = [name]
        while pending:
            for upstream in by_name[pending.pop()].upstream - found:
                found.add(upstream)
                pending.append(upstream)
        return sorted(found)

    def invocation(self, name: str) -> Invocation:
        for invocation in self.invocations:
            if invocation.name == name:
                return invocation
        raise KeyError(name)


PUBLIC_CONTRACTS = (Plan, Invocation, Upstream)
