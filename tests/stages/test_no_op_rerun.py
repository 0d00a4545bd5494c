"""`run`/`demo` start no pipeline process when doit would execute and move nothing (bench/run/runner.py):
every invocation cached by the rule doit's check applies, and every ref the plan names already holding its output.
Anything else (a changed input, a ref another run moved, a ref never set) runs doit. Real doit over a real SQLite
store, with the directory plan of tests/stages/test_uptodate.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_uptodate import DIRECTORIES
from test_uptodate import Plan as DirectoryRun

from bench.pipeline.plan import Plan
from bench.pipeline.runtime import Runtime
from bench.run.directory_plan import directory_summaries
from bench.run.runner import _all_cached

REF = "published/summaries"


@pytest.fixture
def run(tmp_path: Path) -> DirectoryRun:
    ran = DirectoryRun(tmp_path)
    assert len(ran.executed()) == 2 * DIRECTORIES
    return ran


def _plan(run: DirectoryRun, ref_output: str | None = None) -> Plan:
    """The run's plan as built now; with ``ref_output``, that output of its last invocation named by :data:`REF`."""
    plan = directory_summaries(run.base, run.store(), run.names)
    if ref_output is None:
        return plan
    named = plan.invocations[-1].model_copy(update={"refs": {ref_output: REF}})
    return plan.model_copy(update={"invocations": (*plan.invocations[:-1], named)})


def _cached(run: DirectoryRun, plan: Plan) -> bool:
    return _all_cached(plan, Runtime(run.location, run.catalogue), run.store()) is not None


def test_a_plan_all_cached_starts_no_pipeline(run: DirectoryRun) -> None:
    statuses = _all_cached(_plan(run), Runtime(run.location, run.catalogue), run.store())
    assert statuses is not None and len(statuses) == 2 * DIRECTORIES
    assert all(status.outputs for status in statuses)


def test_one_changed_input_runs_the_pipeline(run: DirectoryRun) -> None:
    (run.base / run.names[7] / "notes.md").write_text("# changed\n")
    assert not _cached(run, _plan(run))
    assert run.executed() != []  # and doit, run, does execute it


def test_a_ref_not_holding_its_output_runs_the_pipeline(run: DirectoryRun) -> None:
    store = run.store()
    statuses = _all_cached(_plan(run), Runtime(run.location, run.catalogue), store)
    assert statuses is not None
    last, other = statuses[-1], statuses[0]
    output, produced = next(iter(last.outputs.items()))
    plan = _plan(run, ref_output=output)
    assert not _cached(run, plan)  # never set
    store.set_ref(REF, produced)
    assert _cached(run, plan)
    store.set_ref(REF, next(iter(other.outputs.values())))  # another run moved it
    assert not _cached(run, plan)
