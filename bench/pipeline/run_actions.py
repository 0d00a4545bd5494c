"""The actions a run used, handed to the invocations that publish it: a bundle's lineage is exactly its run.

Every task saves, beside its outputs, the key of the action it ran or found cached (the doit value ``_key``). An
invocation whose stage declares a port of type ``Ref[RunActions]`` (the bundle) takes those keys from every
invocation upstream of it (doit values ``_ran:<invocation>``), and the pipeline fills that port with the
:class:`~bench.store.actions.RunActions` they make. The keys are in the stage's own key like any input, so the same
run gives the same bundle, and an action another run recorded (another suite's attempt that produced the same
bytes, an old run's receipt) never enters it.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..builder.stage import Ports
from ..contracts import Digest, Ref
from ..store.actions import RunActions

__all__ = ["KEY", "RAN", "links", "run_actions", "run_actions_port"]

KEY = "_key"  # the doit value every task saves: its action's key ("_": not an output, see uptodate.ActionCached)
RAN = "_ran:"  # upstream values an invocation with run actions takes: "_ran:<invocation>" -> that action's key


def run_actions_port(inputs: type[Ports]) -> str | None:
    """The port of a stage's inputs (a Ports class) that takes the run's actions, if it declares one."""
    for port in inputs.ports().values():
        if issubclass(port.kind, Ref) and port.kind.document is RunActions:
            return port.name
    return None


def links(upstream: Mapping[str, str]) -> dict[str, str]:
    """The upstream values that fill ports (links), without the run's action keys."""
    return {name: value for name, value in upstream.items() if not name.startswith(RAN)}


def run_actions(upstream: Mapping[str, str]) -> RunActions:
    """The run's actions upstream of an invocation, from the ``_ran:`` values doit handed it."""
    return RunActions.of(Digest(value) for name, value in upstream.items() if name.startswith(RAN))
