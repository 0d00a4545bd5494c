"""The packaging plan runs through doit's task runner function and is cached on the second run."""

from __future__ import annotations

from pathlib import Path

from bench.pipeline.doit_tasks import run_invocation
from bench.run.catalogue import runtime
from bench.run.packaging_plan import packaging_plan
from bench.store import Store
from tests.packaging.gitrepos import RepoFactory


def test_the_plan_runs_corpus_then_redact_and_a_rerun_is_cached(make_repo: RepoFactory, tmp_path: Path) -> None:
    repo, commit = make_repo({"a.txt": b"a\n", "CLAUDE.md": b"memory\n"})
    store = str(tmp_path / "store")
    plan = packaging_plan(repo.parent, Store(store), repo.name, "main")
    corpus_step, redact_step = plan.invocations
    assert corpus_step.params == {"repository": repo.name, "commit": commit, "source": str(repo)}
    for executed in ("true", "false"):  # what the task tells the progress reporter: ran, then found cached
        outputs = run_invocation(runtime(store), corpus_step.model_dump_json())
        redacted = run_invocation(runtime(store), redact_step.model_dump_json(), tree=outputs["tree"])
        assert (outputs["_executed"], redacted["_executed"]) == (executed, executed)
