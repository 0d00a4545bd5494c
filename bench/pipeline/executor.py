"""Where a planned invocation runs: the executor seam beside doit.

doit stays the planner: it orders the tasks, decides what is up to date (by asking the store's action cache) and
hands each task's upstream digests to its action. The action gives the invocation to an :class:`Executor`, which
runs it here (:class:`LocalExecutor`) or on a cluster node (``ray_executor.py``); either way the invocation opens
the same store location and goes through the engine, so its key, outputs and result are the same wherever it ran.

``--executor`` spellings (:mod:`.executor_choice`): ``local`` (the default), ``ray://HOST:PORT`` (a Ray cluster
through its client server; doit runs anywhere), ``ray:HOST:PORT`` or ``ray:auto`` (doit runs on a cluster node and
joins as a driver).
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass

from ..builder.execution import execute
from ..contracts import Digest, canonical_bytes
from ..store.versions import set_versioned_ref
from .plan import Invocation
from .run_actions import links, run_actions
from .runtime import Runtime

__all__ = ["Executor", "LocalExecutor", "Ran", "invocation_inputs", "invoke"]


@dataclass(frozen=True)
class Ran:
    """What one invocation came to, wherever it ran."""

    stage: str
    outputs: dict[str, str]
    executed: bool  # False: the action cache held its result
    key: Digest  # the action's key: what the run used, for the invocations that publish it (run_actions.py)
    node: str | None = None  # the cluster node that ran it; None for this process

    def line(self) -> str:
        """The progress line doit prints for it."""
        verb = "ran" if self.executed else "cached"
        where = f" on {self.node}" if self.node else ""
        produced = ", ".join(f"{name}={Digest(digest).short}" for name, digest in self.outputs.items())
        return f"{verb} {self.stage}{where} -> {produced}"


def invocation_inputs(invocation: Invocation, upstream: Mapping[str, str]) -> dict[str, Digest]:
    """The invocation's inputs by port: upstream outputs as doit hands them over, its stored sources, and the run's
    actions upstream of it where it takes them (:mod:`.run_actions`)."""
    digests = {name: Digest(value) for name, value in links(upstream).items()}
    digests.update(invocation.sources)
    if invocation.run_actions is not None:
        digests[invocation.run_actions] = Digest.of(canonical_bytes(run_actions(upstream)))
    return digests


def invoke(runtime: Runtime, invocation_json: str, upstream: Mapping[str, str]) -> Ran:
    """Execute (or find cached) one invocation in this process, then point its refs at its outputs."""
    invocation = Invocation.model_validate_json(invocation_json)
    stage = runtime.catalogue.get(invocation.stage)
    context = runtime.context()
    if invocation.run_actions is not None:
        context.store.put_document(run_actions(upstream))
    outcome = execute(context, stage, invocation_inputs(invocation, upstream), invocation.params)
    for output, ref in invocation.refs.items():  # every value a plan ref names is kept: nothing is reinterpreted
        set_versioned_ref(context.store, ref, outcome.outputs[output])
    outputs = {name: str(digest) for name, digest in outcome.outputs.items()}
    return Ran(stage=invocation.stage, outputs=outputs, executed=outcome.executed, key=outcome.key)


class Executor(abc.ABC):
    """Runs invocations somewhere; plain data, so doit can hand it to its workers."""

    @abc.abstractmethod
    def run(self, runtime: Runtime, invocation_json: str, upstream: Mapping[str, str]) -> Ran:
        """Run one invocation and return its outcome; its result is in the store before this returns."""

    def check_reachable(self) -> None:
        """Refuse (:class:`~bench.errors.ExecutorError`) an executor that cannot be reached, in seconds, before any
        work is handed to it; this process can always run invocations."""
        return None


@dataclass(frozen=True)
class LocalExecutor(Executor):
    """This process."""

    def run(self, runtime: Runtime, invocation_json: str, upstream: Mapping[str, str]) -> Ran:
        return invoke(runtime, invocation_json, upstream)
