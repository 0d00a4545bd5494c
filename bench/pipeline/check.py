"""The plan check: every invocation against its stage's declaration, before doit runs anything.

For each invocation: the stage exists; the params parse; every input names a declared port (``port/key`` for a dict
port) and every required port is given; a link names an output the upstream stage declares (``port/key`` for one
entry of a dict output, whose keys only the run decides), whose digest type the port accepts; a source is a stored
object of the kind its port declares. A misspelled output therefore fails at load, naming the invocation, the input,
the output and the expected type, not an hour later inside doit.
"""

from __future__ import annotations

import json
from typing import Any

from ..builder.catalogue import Catalogue
from ..builder.stage import SEPARATOR, Port, Stage
from ..contracts import Digest, Ref, TreeDigest, accepts
from ..errors import PlanError
from ..store import Store
from .plan import Invocation, Plan
from .run_actions import run_actions_port

__all__ = ["check_plan"]


def check_plan(plan: Plan, catalogue: Catalogue, store: Store | None = None) -> None:
    """Raise :class:`PlanError` for the first invocation that breaks its stage's declaration.

    With ``store``, sources are also checked to be stored objects of the declared kind.
    """
    stages = {invocation.name: catalogue.get(invocation.stage) for invocation in plan.invocations}
    for invocation in plan.invocations:
        declared = stages[invocation.name]
        declared.parse_params(invocation.params)
        given: set[str] = _run_actions(invocation, declared)
        for name, link in invocation.inputs.items():
            port = _port(invocation, declared, name)
            given.add(port.name)
            upstream = stages[link.invocation]
            field, _, key = link.output.partition(SEPARATOR)
            produced = upstream.outputs.ports().get(field)
            if produced is None or produced.many != bool(key):
                raise PlanError(
                    invocation.name,
                    name,
                    f"takes output {link.output!r} of {link.invocation!r}, but stage {upstream.name!r} declares "
                    f"no such output (it declares: {', '.join(upstream.outputs.ports()) or 'none'})",
                    expected=port.kind.__name__,
                )
            if not accepts(port.kind, produced.kind):
                raise PlanError(
                    invocation.name,
                    name,
                    f"expects {port.kind.__name__}, but output {link.output!r} of {link.invocation!r} is "
                    f"{produced.kind.__name__}",
                    expected=port.kind.__name__,
                    actual=produced.kind.__name__,
                )
        for name, digest in invocation.sources.items():
            port = _port(invocation, declared, name)
            given.add(port.name)
            if store is not None:
                _check_source(invocation, name, port, digest, store)
        missing = [
            p.name for p in declared.inputs.ports().values() if not (p.optional or p.many) and p.name not in given
        ]
        if missing:
            raise PlanError(
                invocation.name, missing[0], f"is required by stage {declared.name!r} but the plan gives it no value"
            )


def _run_actions(invocation: Invocation, declared: Stage[Any, Any, Any]) -> set[str]:
    """The port the pipeline fills with the run's actions, if any: the stage's, never given by the plan."""
    port = run_actions_port(declared.inputs)
    if invocation.run_actions != port:
        raise PlanError(
            invocation.name,
            invocation.run_actions or "run_actions",
            f"stage {declared.name!r} takes the run's actions at {port!r}; the plan names {invocation.run_actions!r}",
        )
    if port is not None and any(
        name.partition(SEPARATOR)[0] == port for name in [*invocation.inputs, *invocation.sources]
    ):
        raise PlanError(
            invocation.name, port, "is filled by the pipeline with the run's actions; the plan gives it none"
        )
    return set() if port is None else {port}


def _port(invocation: Invocation, declared: Stage[Any, Any, Any], name: str) -> Port:
    field, _, key = name.partition(SEPARATOR)
    port: Port | None = declared.inputs.ports().get(field)
    if port is None or port.many != bool(key):
        ports = declared.inputs.ports().values()
        listing = ", ".join(f"{p.name}{SEPARATOR}<key>" if p.many else p.name for p in ports) or "none"
        raise PlanError(invocation.name, name, f"is not an input of stage {declared.name!r} (its inputs: {listing})")
    return port


def _check_source(invocation: Invocation, name: str, port: Port, digest: Digest, store: Store) -> None:
    if not store.has(digest):
        raise PlanError(invocation.name, name, f"names {digest}, which is not in the store")
    expected = "tree" if issubclass(port.kind, TreeDigest) else None
    if issubclass(port.kind, Ref) and port.kind.document is not None:
        expected = str(port.kind.document.model_fields["kind"].default)
    if expected is None:
        return
    actual = json.loads(store.get_bytes(digest)).get("kind") if store.is_document(digest) else None
    if actual != expected:
        raise PlanError(
            invocation.name,
            name,
            f"expects a {expected!r} document, but {digest} is {actual!r}",
            expected=port.kind.__name__,
            actual=str(actual),
        )
