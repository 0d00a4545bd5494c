"""doit's up-to-date check asks the action cache once for the whole plan (bench/pipeline/uptodate.py), with real
doit in this process over a real SQLite store: a no-op rerun of many tasks asks a fixed number of questions, and
one changed input, param or stage version among them still reruns exactly that task and what its outputs feed."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from doit.cmd_base import ModuleTaskLoader
from doit.dependency import Dependency, SqliteDB
from doit.doit_cmd import DoitMain

from bench.builder.catalogue import Catalogue
from bench.contracts import Digest
from bench.pipeline.doit_tasks import doit_tasks
from bench.pipeline.run_actions import KEY
from bench.pipeline.runtime import Runtime
from bench.pipeline.uptodate import PlanLookup, upstream_values
from bench.run.directory_plan import directory_summaries
from bench.stages.directory_tree import directory_tree
from bench.stages.tree_summary import tree_summary
from bench.store import Store
from bench.store.actions import ActionKey, recorded_from

DIRECTORIES = 30  # 60 tasks: more than one of each kind, each asked in one batch


class Plan:
    def __init__(self, tmp_path: Path) -> None:
        self.base = tmp_path / "inputs"
        self.names = [f"d{index:03}" for index in range(DIRECTORIES)]
        for name in self.names:
            (self.base / name).mkdir(parents=True)
            (self.base / name / "notes.md").write_text(f"# {name}\n")
        self.location = str(tmp_path / "store")
        self.database = str(tmp_path / "doit.sqlite")
        self.catalogue = Catalogue([directory_tree, tree_summary])

    def store(self) -> Store:
        return Runtime(self.location, self.catalogue).open_store()

    def executed(self) -> list[str]:
        """Run the plan through doit; "stage:directory" (or ":tree") of every action that executed."""
        store = self.store()
        plan = directory_summaries(self.base, store, self.names)
        runtime = Runtime(self.location, self.catalogue)

        def task_plan() -> Iterator[dict[str, Any]]:
            yield from doit_tasks(plan, runtime)

        since = time.time()
        config = {"dep_file": self.database, "backend": "sqlite3", "verbosity": 0}
        code = DoitMain(ModuleTaskLoader({"DOIT_CONFIG": config, "task_plan": task_plan})).run([])
        assert code == 0
        labels = []
        for result in recorded_from(store, since):
            key = store.get_document(result.key, ActionKey)
            labels.append(f"{key.stage}:{Path(str(key.params['directory'])).name if key.params else 'tree'}")
        return sorted(labels)


@pytest.fixture
def plan(tmp_path: Path) -> Plan:
    planned = Plan(tmp_path)
    assert len(planned.executed()) == 2 * DIRECTORIES
    return planned


def test_a_no_op_rerun_asks_the_store_a_fixed_number_of_questions_not_some_per_task(
    plan: Plan, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: dict[str, int] = {}
    backend = plan.store().backend
    for method in ("stat", "get", "results", "stat_many", "get_many", "results_many"):
        real = getattr(backend, method)

        def counting(*args: Any, _real: Any = real, _name: str = method) -> Any:
            asked[_name] = asked.get(_name, 0) + 1
            return _real(*args)

        monkeypatch.setattr(backend, method, counting)
    assert plan.executed() == []
    assert asked.get("results", 0) == 0 and asked.get("get", 0) == 0, asked
    assert asked.get("stat", 0) <= 4, asked  # the stages' code digests, once each per process
    assert asked["results_many"] == 1 and asked["stat_many"] <= 3 and asked["get_many"] <= 1, asked


def test_one_changed_input_among_many_reruns_only_it_and_the_summary_of_it(plan: Plan) -> None:
    (plan.base / "d017" / "notes.md").write_text("# d017, revised\n")
    assert plan.executed() == ["directory-tree:d017", "tree-summary:tree"]
    assert plan.executed() == []


def test_a_touched_input_reruns_its_observation_and_nothing_its_unchanged_tree_feeds(plan: Plan) -> None:
    os.utime(plan.base / "d007" / "notes.md", (1, 1))
    assert plan.executed() == ["directory-tree:d007"]


def test_a_changed_stage_version_reruns_exactly_that_stages_invocations(plan: Plan) -> None:
    bumped = dataclasses.replace(tree_summary, version=tree_summary.version + 1)
    plan.catalogue = Catalogue([directory_tree, bumped])
    assert plan.executed() == ["tree-summary:tree"] * DIRECTORIES
    assert plan.executed() == []


def test_a_result_whose_output_was_collected_is_not_up_to_date(plan: Plan) -> None:
    store = plan.store()
    summary = next(
        digest
        for result in recorded_from(store, 0.0)
        if "summary" in result.outputs and (digest := result.outputs["summary"])
    )
    store.backend.delete([summary])
    rerun = plan.executed()
    assert rerun == ["tree-summary:tree"], rerun


def test_a_malformed_value_in_doits_database_is_its_tasks_alone_and_executes_no_stage(plan: Plan) -> None:
    """doit's database is a disposable cache: a value that is not a digest fails only its own task's check (the
    plan-wide question leaves that task to be asked alone), so the run goes on and finds every result cached."""
    with contextlib.closing(sqlite3.connect(plan.database)) as database, database:
        (data,) = database.execute("SELECT task_data FROM doit WHERE task_id = 'tree-d003'").fetchone()
        saved = json.loads(data)
        saved["_values_:"]["tree"] = "not a digest"
        database.execute("UPDATE doit SET task_data = ? WHERE task_id = 'tree-d003'", (json.dumps(saved),))
    assert plan.executed() == []
    assert plan.executed() == []


def test_answers_are_kept_only_for_kept_seconds_then_asked_again_plan_wide(
    plan: Plan, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An output collected after the plan-wide question: the kept answer stands only while it is younger than
    ``kept_seconds``; after that the task is asked again and found not cached, as if asked alone."""
    store = plan.store()
    built = directory_summaries(plan.base, store, plan.names)
    lookup = PlanLookup(built, Runtime(plan.location, plan.catalogue))
    dependency = Dependency(SqliteDB, plan.database)
    summary = built.invocation("summary-d005")
    upstream = upstream_values(dependency, summary)
    assert upstream is not None
    outputs = lookup.cached_outputs(dependency, summary, upstream)
    assert outputs is not None and set(outputs) == {"summary", KEY}  # the outputs and the action key
    store.backend.delete([Digest(outputs["summary"])])
    assert lookup.cached_outputs(dependency, summary, upstream) == outputs  # asked a moment ago: kept
    monkeypatch.setattr(PlanLookup, "kept_seconds", 0.0)
    assert lookup.cached_outputs(dependency, summary, upstream) is None
    dependency.close()
