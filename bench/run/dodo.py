"""The doit pipeline, inside the package so an installed stele-bench runs it: one task per stage invocation.

    python -m bench.run.dodo [doit options] [suite=DIR | plan=SPEC] [store=DIR] [attempts=N] [memory=A,B]
                             [executor=ray://HEAD:PORT] [failure=FILE]

``suite=DIR`` plans the suite in DIR (relative to the working directory, which is where the plan's relative paths
start); ``plan=SPEC`` reads a plan spec (``manifests/plans/*.json``); neither: the bundled example. ``store`` is
the store: a directory or ``s3://BUCKET/PREFIX`` (default: ``$STELE_BENCH_STORE``, else the project's).
``executor`` is where invocations run (:func:`bench.pipeline.executor_choice.parse_executor`; default
``$STELE_BENCH_EXECUTOR``, else ``local``): with a Ray cluster doit's workers only wait, so run them as threads
(``-P thread``), sharing one Ray connection. The repository's ``dodo.py`` imports
this module, so ``doit`` in a checkout runs the same tasks. `stele-bench demo` and `stele-bench run` start this
module as a process with the project's store and database named explicitly.

The plan is built and checked before doit starts, so a refused input (too many attempts, a moved
preregistration, a missing image) is one line with its exit code, not a traceback from inside doit. A stage's error
that stops the run decides the exit code too (:mod:`bench.pipeline.failure`): a fence stop exits 12, a store
outage 8, a full disk 74, as the command that met it alone would. ``failure=FILE`` hands that error to the command
that started this process (`demo`, `run`), which reports it; without it, it is said here in one line. A stop signal
ends the run the same way: one line (``interrupted by SIGTERM``), exit 128 + the signal, no traceback.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from doit import get_var
from doit.cmd_base import ModuleTaskLoader
from doit.doit_cmd import DoitMain
from doit.exceptions import InvalidTask

from ..errors import BenchError, UsageError
from ..pipeline.doit_db import DOIT_BACKENDS
from ..pipeline.doit_tasks import doit_tasks
from ..pipeline.executor import Executor
from ..pipeline.executor_choice import parse_executor
from ..pipeline.failure import PipelineStopped, read_failure, set_failure_file
from ..pipeline.plan import Plan
from ..pipeline.plans import build_plan, load_plan
from ..pipeline.progress import ProgressReporter
from ..project import find_project

# The handlers still live in the command line's module; moving them beside Interrupted (bench.stopping) removes
# this upward import (issue 35).
from ..stop_signals import install_stop_signals, stop_with_parent
from ..stopping import Interrupted
from ..store.location import store_location
from .catalogue import PLAN_BUILDERS, STAGES, runtime
from .narrate import SuiteNarrator

__all__ = ["DOIT_CONFIG", "SuiteProgress", "main", "plan_variables", "task_plan"]

EXAMPLE_PLAN = Path("manifests/plans/example.json")
WORKER_GRACE_SECONDS = 25.0  # within the 30 s the command gives this process (bench.stop_signals.end_child)


class SuiteProgress(ProgressReporter):
    """Progress lines that say what each suite stage produced."""

    narrator = SuiteNarrator()


def _default_database() -> str:
    named = os.environ.get("STELE_BENCH_DOIT_DB")
    if named:
        return named
    project = find_project(Path.cwd())
    return str(project.doit_db) if project is not None else ".doit.sqlite"


DOIT_CONFIG: dict[str, Any] = {
    "dep_file": _default_database(),
    "backend": "sqlite3",
    "default_tasks": None,
    "verbosity": 2,
    "reporter": SuiteProgress,
}

_PREPARED: dict[str, tuple[str, Plan]] = {}  # the store and plan main() built before doit started


def plan_variables(variables: Mapping[str, str]) -> tuple[str, Plan]:
    """The store and the checked plan that ``name=value`` variables describe, the plan's paths starting at the
    working directory (as in the pipeline process); every refusal is a BenchError."""
    store = _store_location(variables.get("store"))
    overrides: dict[str, Any] = {}
    if variables.get("attempts"):
        overrides["attempts"] = _attempts(variables["attempts"])
    if variables.get("memory"):
        overrides["memory"] = tuple(name for name in variables["memory"].split(",") if name)
    if variables.get("harness"):
        overrides["harness"] = variables["harness"]
    opened = runtime(store).open_store()
    if variables.get("suite"):
        spec = {"builder": "suite", "args": {"suite": variables["suite"]}}
        return store, build_plan(spec, "suite=" + variables["suite"], opened, PLAN_BUILDERS, STAGES, overrides)
    return store, load_plan(Path(variables.get("plan") or EXAMPLE_PLAN), opened, PLAN_BUILDERS, STAGES, overrides)


def _attempts(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"attempts={text!r}: expected a whole number of at least 1", field="attempts", actual=text)
    return int(text)


def _store_location(named: str | None) -> str:
    if named:
        return store_location(named)
    from_environment = os.environ.get("STELE_BENCH_STORE")
    if from_environment:
        return store_location(from_environment)
    project = find_project(Path.cwd())
    return store_location(project.store if project is not None else Path("store"))


def _executor(named: str | None) -> Executor:
    return parse_executor(named or os.environ.get("STELE_BENCH_EXECUTOR", "local"))


def task_plan() -> Iterator[dict[str, Any]]:  # doit reads task_* names; one top-level task per invocation
    keys = ("suite", "plan", "store", "attempts", "memory")
    variables = {key: str(get_var(key)) for key in keys if get_var(key)}
    try:
        location, plan = _PREPARED.get("run") or plan_variables(variables)
        executor = _executor(get_var("executor"))
    except BenchError as exc:  # plain `doit` in a checkout: one line from doit, not a traceback
        raise InvalidTask(str(exc)) from None
    yield from doit_tasks(plan, runtime(location), executor)


def _variables(argv: Sequence[str]) -> dict[str, str]:
    """doit's ``name=value`` command-line variables, as doit will read them."""
    return dict(word.split("=", 1) for word in argv if "=" in word and not word.startswith("-"))


def main(argv: Sequence[str] | None = None) -> int:
    """Build and check the plan, then hand the tasks to doit; a refused plan is one line on stderr."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    variables = _variables(arguments)
    reported = variables.get("failure")  # the starting command reports what stopped the run; else it is said here
    # SIGTERM unwinds a running stage like Ctrl-C, so its containers, provisioner and gateway are ended on the way.
    install_stop_signals()
    try:
        if reported:  # started by `demo`/`run`: stop (cleanly) should that command be killed outright
            stop_with_parent()
        _executor(variables.get("executor")).check_reachable()  # a misspelled or unreachable one: refused first
        _PREPARED["run"] = plan_variables(variables)
        with tempfile.TemporaryDirectory(prefix="stele-bench-failure-") as scratch:
            recorded = Path(reported) if reported else Path(scratch) / "failure.json"
            set_failure_file(recorded)
            loader = ModuleTaskLoader({"DOIT_CONFIG": DOIT_CONFIG, "task_plan": task_plan})
            code: int = DoitMain(loader, extra_config=DOIT_BACKENDS).run(arguments)
            failure = read_failure(recorded) if code != 0 else None
            if failure is not None:
                raise PipelineStopped(failure, code)
        return code
    except Interrupted as stop:  # every cleanup ran on the way here; doit's reporter said what had run
        _workers_ended()
        if not reported:
            print(f"stele-bench: interrupted by {stop.signal_name}", file=sys.stderr, flush=True)
        return stop.exit_code
    except BenchError as exc:
        if not reported or not isinstance(exc, PipelineStopped):
            print(f"stele-bench: error: {exc}", file=sys.stderr, flush=True)
        return exc.exit_code


def _workers_ended() -> None:
    """Wait for doit's worker processes to finish the cleanup their own stop started (doit sent them SIGTERM and
    returned without waiting), so that when this process ends, their containers and networks are gone; one that
    outlives :data:`WORKER_GRACE_SECONDS` is killed, and what it held is left to the next run's sweep."""
    deadline = time.monotonic() + WORKER_GRACE_SECONDS
    for worker in multiprocessing.active_children():
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            worker.kill()
            worker.join()


if __name__ == "__main__":
    raise SystemExit(main())
