"""The doit pipeline over the store: the second run executes nothing; a change re-runs exactly its dependents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.store import Store
from bench.store.actions import ActionKey, recorded_from

REPO = Path(__file__).resolve().parents[2]


class Pipeline:
    def __init__(self, tmp_path: Path) -> None:
        self.base = tmp_path / "inputs"
        for name in ("alpha", "beta"):
            (self.base / name).mkdir(parents=True)
            (self.base / name / "notes.md").write_text(f"# {name}\n")
        self.spec = tmp_path / "plan.json"
        spec = {"builder": "directory-summaries", "base": str(self.base), "args": {"directories": ["alpha", "beta"]}}
        self.spec.write_text(json.dumps(spec))
        self.store_path = tmp_path / "store"
        self.env = {**os.environ, "STELE_BENCH_DOIT_DB": str(tmp_path / "doit.sqlite")}

    def doit(self, *args: str) -> str:
        command = [sys.executable, "-m", "doit", *args, f"plan={self.spec}", f"store={self.store_path}"]
        done = subprocess.run(command, cwd=REPO, env=self.env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def executed(self, *args: str) -> list[str]:
        """Run doit; return "stage:directory-or-input" for every action it executed, from the store's log."""
        since = time.time()
        self.doit(*args)
        store = Store(self.store_path)
        labels = []
        for result in recorded_from(store, since):
            key = store.get_document(result.key, ActionKey)
            label = key.params.get("directory") or key.inputs.get("tree")
            labels.append(f"{key.stage}:{Path(str(label)).name if key.params else 'tree'}")
        return sorted(labels)


@pytest.fixture
def pipeline(tmp_path: Path) -> Pipeline:
    return Pipeline(tmp_path)


def test_second_run_executes_no_action(pipeline: Pipeline) -> None:
    first = pipeline.executed()
    assert first == ["directory-tree:alpha", "directory-tree:beta", "tree-summary:tree", "tree-summary:tree"]
    assert pipeline.executed() == []


def test_changing_one_input_reruns_exactly_its_dependents(pipeline: Pipeline) -> None:
    pipeline.executed()
    (pipeline.base / "alpha" / "notes.md").write_text("# alpha, revised\n")
    assert pipeline.executed() == ["directory-tree:alpha", "tree-summary:tree"]


def test_touching_without_changing_content_reruns_the_observation_only(pipeline: Pipeline) -> None:
    pipeline.executed()
    os.utime(pipeline.base / "beta" / "notes.md", (1, 1))
    assert pipeline.executed() == ["directory-tree:beta"]


def test_losing_doits_db_loses_no_action(pipeline: Pipeline, tmp_path: Path) -> None:
    pipeline.executed()
    (tmp_path / "doit.sqlite").unlink()
    assert pipeline.executed() == []
    assert "ran " not in pipeline.doit()


def test_two_workers_share_one_store(pipeline: Pipeline) -> None:
    assert len(pipeline.executed("-n", "2")) == 4
    assert pipeline.executed("-n", "2") == []


def test_doit_list_names_one_task_per_invocation(pipeline: Pipeline) -> None:
    listed = pipeline.doit("list").split()
    assert {"tree-alpha", "summary-alpha", "tree-beta", "summary-beta"} <= set(listed)
