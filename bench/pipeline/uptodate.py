"""doit's up-to-date check of a plan's tasks: the store's action cache, asked for the whole plan at once.

doit asks each task whether it is up to date (its ``uptodate``, :class:`ActionCached`), one task at a time and
only once the task's upstream tasks are done. Asked one task at a time, the store cost seven queries and a
document read per task, most of a no-op rerun of a large plan. So the first time doit asks, :class:`PlanLookup`
asks for every task of the plan: each task's key from the upstream values doit holds at that moment, then one
query for the results of all keys and one per round for the objects they name (:func:`cached_results`). A task
whose upstream values are still those when doit asks about it gets that answer; a task whose upstream ran again
in this run (its values changed) is asked alone. Either way the question is the same function's, so a changed
input, param, stage version or code digest reruns exactly that task and what depends on it.

Nothing is written while asking: a key is computed as the engine stores it, and a result counts only if its key
document is stored too (the engine stores the key of every result it records). Answers are kept for
``PlanLookup.kept_seconds``, then asked for again plan-wide, so doit never acts on an answer older than that.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Mapping, Sequence
from typing import Any

from doit.dependency import UptodateCalculator

from ..builder.code_digest import store_code_manifest
from ..builder.execution import cached_results, key_document
from ..contracts import Digest, canonical_bytes
from ..contracts.files import collection_paused
from ..errors import BenchError
from ..store import Store
from .executor import invocation_inputs
from .failure import record_failure
from .plan import Invocation, Plan
from .run_actions import KEY, RAN
from .runtime import Runtime

__all__ = ["ActionCached", "PlanLookup", "upstream_values"]

Values = dict[str, str]  # a task's outputs as doit saves them: output name -> digest


class PlanLookup:
    """The cached outputs of a plan's invocations, asked once for all of them and then for each one that changed."""

    # How long answers are kept: a no-op rerun of 4,000 tasks decides them all within seconds, and an answer is
    # never older than this when doit acts on it, so an output collected meanwhile (gc alongside a long run) is
    # seen as it was when each task was asked alone. Older answers are asked for again, plan-wide.
    kept_seconds = 10.0

    def __init__(self, plan: Plan, runtime: Runtime) -> None:
        self.plan = plan
        self.runtime = runtime
        # The invocations found cached when last asked: the upstream values asked with, and the outputs.
        self._cached: dict[str, tuple[Values, Values]] = {}
        self._asked_at: float | None = None
        self._ancestors: dict[str, list[str]] = {}

    def ancestors(self, invocation: Invocation) -> list[str]:
        """The invocations whose action keys ``invocation`` takes (all upstream of it), or none (run_actions.py)."""
        if invocation.run_actions is None:
            return []
        if invocation.name not in self._ancestors:
            self._ancestors[invocation.name] = self.plan.ancestors(invocation.name)
        return self._ancestors[invocation.name]

    def cached_outputs(self, dep_manager: Any, invocation: Invocation, upstream: Values) -> Values | None:
        """The outputs the action cache holds for ``invocation`` on ``upstream`` (None: it must run).

        Only a cached answer is kept: one that was not cached is asked again, as a task run since (the same action
        in another invocation) may have recorded it."""
        now = time.monotonic()
        if self._asked_at is None or now - self._asked_at > self.kept_seconds:
            self._cached, self._asked_at = self._ask_all(dep_manager), now
        known = self._cached.get(invocation.name)
        if known is not None and known[0] == upstream:
            return known[1]
        return self._ask({invocation.name: (invocation, upstream)})[invocation.name]

    def _ask_all(self, dep_manager: Any) -> dict[str, tuple[Values, Values]]:
        # Objects per task, and no cycles: a full collection set off here would walk every task doit holds.
        with collection_paused():
            asked: dict[str, tuple[Invocation, Values]] = {}
            for invocation in self.plan.invocations:
                upstream = upstream_values(dep_manager, invocation, self.ancestors(invocation))
                if upstream is not None:
                    asked[invocation.name] = (invocation, upstream)
            answers = self._ask(asked, refused_alone=True)
        return {name: (asked[name][1], outputs) for name, outputs in answers.items() if outputs is not None}

    def _ask(
        self, asked: Mapping[str, tuple[Invocation, Values]], refused_alone: bool = False
    ) -> dict[str, Values | None]:
        """Cached outputs of each invocation asked; with ``refused_alone``, one whose key cannot be made (a
        malformed value in doit's database) is left out, to be asked alone and refused in its own task."""
        store = self.runtime.open_store()
        codes: dict[str, Digest] = {}
        keyed: dict[str, tuple[Digest, list[Digest]]] = {}
        for name, (invocation, upstream) in asked.items():
            try:
                keyed[name] = self._key(store, codes, invocation, upstream)
            except (BenchError, ValueError):
                if not refused_alone:
                    raise
        present = store.has_many([digest for key, inputs in keyed.values() for digest in (key, *inputs)])
        askable = [key for key, inputs in keyed.values() if key in present and present.issuperset(inputs)]
        cached = cached_results(store, askable)
        return {
            name: {**{output: str(digest) for output, digest in cached[key][1].outputs.items()}, KEY: str(key)}
            if key in cached
            else None
            for name, (key, _) in keyed.items()
        }

    def _key(
        self, store: Store, codes: dict[str, Digest], invocation: Invocation, upstream: Values
    ) -> tuple[Digest, list[Digest]]:
        """The digest of the invocation's action key (not stored), and its input digests."""
        stage = self.runtime.catalogue.get(invocation.stage)
        inputs = stage.parse_inputs(invocation_inputs(invocation, upstream)).flat()
        code = codes.get(stage.module)
        if code is None:
            code = codes[stage.module] = store_code_manifest(store, stage.module)
        key = key_document(stage, code, inputs, stage.parse_params(invocation.params))
        return Digest.of(canonical_bytes(key)), list(inputs.values())


def upstream_values(dep_manager: Any, invocation: Invocation, ancestors: Sequence[str] = ()) -> Values | None:
    """The upstream outputs doit holds for the invocation's links, and the action keys of ``ancestors`` (see
    run_actions.py); None while any of them is missing."""
    wanted = [(name, link.invocation, link.output) for name, link in invocation.inputs.items()]
    wanted += [(f"{RAN}{ancestor}", ancestor, KEY) for ancestor in ancestors]
    upstream: Values = {}
    for name, task, output in wanted:
        value = dep_manager.get_values(task).get(output)
        if value is None:
            return None
        upstream[name] = value
    return upstream


class ActionCached(UptodateCalculator):  # type: ignore[misc]
    """doit `uptodate`: up to date exactly when the action cache holds the task's outputs as doit saved them."""

    # doit reads an uptodate's signature on every check to learn which arguments it takes; read from an instance
    # of a class, that took 0.1 ms per task. Declared, it is an attribute read.
    __signature__ = inspect.Signature(
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in ("task", "values")]
    )

    def __init__(self, lookup: PlanLookup, invocation: Invocation) -> None:
        super().__init__()
        self.lookup = lookup
        self.invocation = invocation
        self.dep_manager: Any = None

    def setup(self, dep_manager: Any, tasks_dict: dict[str, Any]) -> None:
        # Not the tasks: kept here they would be a reference cycle through every task (see ProgressReporter).
        self.dep_manager = dep_manager

    def __call__(self, task: Any, values: dict[str, Any]) -> bool:
        upstream = upstream_values(self.dep_manager, self.invocation, self.lookup.ancestors(self.invocation))
        if upstream is None:
            return False
        try:
            cached = self.lookup.cached_outputs(self.dep_manager, self.invocation, upstream)
        except BenchError as exc:
            # Raised here, it would crash doit with a traceback and no FAILED line. Recorded as what stopped the
            # run and answered "not up to date", the task runs, meets the same error and fails with its line.
            record_failure(self.invocation.name, self.invocation.stage, exc)
            return False
        # doit also keeps `_result:<task>` entries of its own among the values; only the outputs and the action's
        # key matter here (a saved key that is not the current one would hand a publishing stage another action).
        saved = {name: value for name, value in values.items() if not name.startswith("_") or name == KEY}
        return cached is not None and saved == cached
