"""Lineage: which actions and inputs produced an object, down to its roots; and re-derivation."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..contracts import Digest, TreeDigest
from ..errors import StageError
from ..store import Store
from ..store.actions import ActionKey, ActionResult, producers
from .catalogue import Catalogue
from .code_digest import store_code_manifest
from .context import StageContext
from .stage import Stage, StageKind, TreeReads

__all__ = [
    "Lineage",
    "RederiveResult",
    "RederiveVerdict",
    "lineage",
    "producer_of",
    "rederivable",
    "rederive",
    "rerun",
]


@dataclass
class Lineage:
    """``digest`` and the action that produced it (None for a root input), with its inputs' lineages."""

    digest: Digest
    stage: str | None = None
    action: Digest | None = None
    result: Digest | None = None
    output: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, Lineage] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"digest": self.digest}
        if self.stage is not None:
            data.update(stage=self.stage, action=self.action, result=self.result, output=self.output)
            data.update(params=self.params, inputs={name: sub.as_json() for name, sub in self.inputs.items()})
        return data

    def lines(self, indent: str = "") -> list[str]:
        if self.stage is None:
            return [f"{indent}{self.digest}  (root input)"]
        action = self.action.short if self.action else ""
        head = f"{indent}{self.digest}  <- {self.output} of {self.stage} (action {action})"
        body = [f"{indent}  {name}:\n" + "\n".join(sub.lines(indent + "    ")) for name, sub in self.inputs.items()]
        if not self.inputs:  # an action with no stored inputs reads the outside world: its params are the root
            body = [f"{indent}  from {key} = {value}" for key, value in sorted(self.params.items())]
        return [head, *body]


def producer_of(store: Store, digest: Digest) -> tuple[Digest, ActionResult, ActionKey] | None:
    """The earliest recorded action that output ``digest``, if any (ties broken by the result's digest).

    Action keys are content-addressed, so once recorded the action behind a digest does not change; when several
    actions produced one digest (a re-run with new code that derived the same bytes), every reader takes this one.
    """
    found = [(result, store.get_document(result, ActionResult)) for result in producers(store, digest)]
    if not found:
        return None
    result_digest, result = min(found, key=lambda item: (item[1].started, item[0]))
    return result_digest, result, store.get_document(result.key, ActionKey)


def lineage(store: Store, digest: Digest) -> Lineage:
    produced = producer_of(store, digest)
    if produced is None:
        if not store.has(digest):
            raise StageError(f"{digest} is neither stored nor produced by any recorded action")
        return Lineage(digest=digest)
    result_digest, result, key = produced
    output = next(name for name, value in result.outputs.items() if value == digest)
    return Lineage(
        digest=digest,
        stage=key.stage,
        action=result.key,
        result=result_digest,
        output=output,
        params=dict(key.params),
        inputs={name: lineage(store, value) for name, value in key.inputs.items()},
    )


class RederiveVerdict(enum.StrEnum):
    SAME = "same"
    DIFFERENT = "different"


@dataclass(frozen=True)
class RederiveResult:
    verdict: RederiveVerdict
    stage: str
    recorded: dict[str, Digest]
    derived: dict[str, Digest]
    code_changed: bool | None = None  # None: not asked (a published bundle carries no code to compare with)

    @property
    def differing(self) -> dict[str, tuple[Digest | None, Digest | None]]:
        names = sorted(self.recorded.keys() | self.derived.keys())
        return {
            name: (self.recorded.get(name), self.derived.get(name))
            for name in names
            if self.recorded.get(name) != self.derived.get(name)
        }


def rederivable(stage: Stage[Any, Any, Any], key: ActionKey, *, listings_only: bool = False) -> bool:
    """Whether the action ``key`` can be re-run from what its source holds: a store holds whole trees and (with
    locator params) reaches the outside world; a published bundle (``listings_only``) holds neither, so there an
    action must read stored inputs and read trees only as the listings a bundle carries."""
    if stage.kind is not StageKind.DETERMINISTIC:
        return False
    if not listings_only:
        return True
    if not key.inputs:
        return False
    if stage.trees is TreeReads.LISTINGS:
        return True
    ports = stage.inputs.ports()
    return not any(issubclass(ports[name.split("/", 1)[0]].kind, TreeDigest) for name in key.inputs)


def rerun(
    context: StageContext,
    stage: Stage[Any, Any, Any],
    key: ActionKey,
    result: ActionResult,
    located: Mapping[str, str] | None = None,
) -> RederiveResult:
    """Run ``stage`` again on the inputs and params ``key`` recorded (objects read from ``context``'s store: a
    store, or a bundle's files put in one) and compare its outputs with ``result``'s. The one re-derivation, for
    ``rederive`` and for ``verify``; a stage's refusal to run propagates."""
    params = stage.parse_params({**key.params, **(located or {})})
    derived = stage.run(context, stage.parse_inputs(key.inputs), params).flat()
    same = derived == dict(result.outputs)
    return RederiveResult(
        verdict=RederiveVerdict.SAME if same else RederiveVerdict.DIFFERENT,
        stage=stage.name,
        recorded=dict(result.outputs),
        derived=dict(derived),
    )


def rederive(
    context: StageContext, catalogue: Catalogue, digest: Digest, located: Mapping[str, str] | None = None
) -> RederiveResult:
    """Re-run the deterministic action that produced ``digest`` from its recorded inputs and compare outputs.

    ``located`` gives the stage's locator params (where to read an outside input), which action keys leave out.
    Nothing new is recorded in the action cache: this re-checks a receipt, it does not produce one.
    """
    store = context.store
    produced = producer_of(store, digest)
    if produced is None:
        raise StageError(f"{digest} was not produced by any recorded action, so there is nothing to re-derive")
    _, result, key = produced
    stage = catalogue.get(key.stage)
    if not rederivable(stage, key):
        raise StageError(
            f"{digest} comes from the {stage.kind.value} stage {stage.name!r}, which is recorded, not re-derived"
        )
    rerun_result = rerun(context, stage, key, result, located)
    return replace(rerun_result, code_changed=store_code_manifest(store, stage.module) != key.code)
