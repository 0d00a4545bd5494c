"""Turn a :class:`Plan` into doit tasks, one per invocation.

The store's action cache is the truth; doit's own DB is a disposable cache. A task is up to date exactly when the
action cache holds a result for its key (computed from the upstream digests doit hands over as values) and
every output is present, and doit's saved values agree with that result. If doit's DB is lost, the tasks'
Python actions run again, find the cached result and execute no stage.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..errors import BenchError
from ..stopping import stopped
from .executor import Executor, LocalExecutor
from .failure import record_failure
from .plan import Invocation, Plan
from .run_actions import KEY, RAN
from .runtime import Runtime
from .uptodate import ActionCached, PlanLookup

__all__ = ["doit_tasks", "perform", "run_invocation"]


def perform(executor: Executor, runtime: Runtime, invocation_json: str, **upstream: str) -> dict[str, str]:
    """The doit action: the executor runs (or finds cached) one invocation; its outputs become the task's values.
    Its error is also recorded as what stopped the run (:mod:`.failure`), for the command that started it."""
    try:
        ran = executor.run(runtime, invocation_json, upstream)
    except Exception as exc:
        stop = stopped()
        if stop is not None:  # a cleanup after a stop signal failed: still a stop, which ends the worker too
            print(
                f"note: cleaning up after {stop.signal_name} met: {exc}; the next run sweeps what is left", flush=True
            )
            raise stop from exc
        if isinstance(exc, BenchError):
            invocation = Invocation.model_validate_json(invocation_json)
            record_failure(invocation.name, invocation.stage, exc)
        raise
    if ran.node is not None:  # the progress reporter cannot see where a cluster ran it: said here
        print(ran.line(), flush=True)
    # `_executed` tells the progress reporter whether the stage ran or its result was found cached (doit's own
    # database may have been lost); names starting with "_" are not outputs (see ActionCached).
    return {**ran.outputs, "_executed": "true" if ran.executed else "false", KEY: str(ran.key)}


def run_invocation(runtime: Runtime, invocation_json: str, **upstream: str) -> dict[str, str]:
    """One invocation in this process, as the local executor runs it."""
    return perform(LocalExecutor(), runtime, invocation_json, **upstream)


def doit_tasks(plan: Plan, runtime: Runtime, executor: Executor | None = None) -> Iterator[dict[str, Any]]:
    """One doit task dict per invocation, named after it, run by ``executor`` (default: this process)."""
    lookup = PlanLookup(plan, runtime)
    for invocation in plan.invocations:
        getargs = {name: (link.invocation, link.output) for name, link in invocation.inputs.items()}
        getargs.update({f"{RAN}{name}": (name, KEY) for name in lookup.ancestors(invocation)})
        yield {
            "basename": invocation.name,
            "doc": f"{invocation.stage} stage",
            "actions": [(perform, [executor or LocalExecutor(), runtime, invocation.model_dump_json()])],
            "getargs": getargs,
            "task_dep": sorted(invocation.upstream),
            "uptodate": [ActionCached(lookup, invocation)],
            "verbosity": 2,
            "meta": {"stage": invocation.stage, "labels": dict(invocation.labels), "store": runtime.store},
        }
