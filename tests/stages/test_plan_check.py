"""A plan is checked against the stages' declarations when it is loaded, before doit runs anything.

A link to an output the upstream stage does not declare, or to an output of another digest type, a source of the
wrong kind, an input the stage has no port for, and a missing required input are each refused with the
invocation, the input, the output and the expected type named.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.builder import NoParams, Ports, StageContext, StageKind, stage
from bench.builder.execution import execute
from bench.contracts import Digest, Ref, TreeDigest, accepts
from bench.errors import PlanError, StageError
from bench.pipeline.builder import PlanBuilder
from bench.pipeline.check import check_plan
from bench.pipeline.plan import Invocation, Plan, Upstream
from bench.pipeline.plans import load_plan
from bench.run.catalogue import PLAN_BUILDERS, STAGES
from bench.stages.directory_tree import DirectoryParams, directory_fingerprint, directory_tree
from bench.stages.tree_summary import TreeSummary, tree_summary
from bench.store import Store, tree_from_entries


def _directory_plan(tmp_path: Path, output: str = "tree") -> Plan:
    (tmp_path / "inputs").mkdir(exist_ok=True)
    params = DirectoryParams(directory=str(tmp_path / "inputs"), fingerprint=directory_fingerprint(tmp_path / "inputs"))
    return Plan(
        invocations=(
            Invocation(name="tree-a", stage="directory-tree", params=params.model_dump(mode="json")),
            Invocation(
                name="summary-a",
                stage="tree-summary",
                params={},
                inputs={"tree": Upstream(invocation="tree-a", output=output)},
            ),
        )
    )


def test_a_link_to_a_missing_output_is_refused_naming_invocation_output_and_type(tmp_path: Path) -> None:
    with pytest.raises(PlanError) as caught:
        check_plan(_directory_plan(tmp_path, output="tre"), STAGES)
    error = caught.value
    assert (error.invocation, error.port, error.expected) == ("summary-a", "tree", "TreeDigest")
    assert "output 'tre' of 'tree-a'" in str(error) and "declares no such output (it declares: tree)" in str(error)


def test_a_link_to_an_output_of_the_wrong_type_is_refused(tmp_path: Path) -> None:
    plan = _directory_plan(tmp_path)
    extra = Invocation(
        name="summary-of-summary",
        stage="tree-summary",
        params={},
        inputs={"tree": Upstream(invocation="summary-a", output="summary")},
    )
    with pytest.raises(PlanError) as caught:
        check_plan(Plan(invocations=(*plan.invocations, extra)), STAGES)
    error = caught.value
    assert (error.invocation, error.port, error.expected, error.actual) == (
        "summary-of-summary",
        "tree",
        "TreeDigest",
        "Ref[TreeSummary]",
    )
    assert "expects TreeDigest, but output 'summary' of 'summary-a' is Ref[TreeSummary]" in str(error)


def test_a_plan_file_with_a_bad_link_is_refused_at_load(tmp_path: Path, store: Store) -> None:
    """The same check runs when a spec's builder returns its plan: `dodo.py` never sees a bad one."""
    bad = _directory_plan(tmp_path, output="tre")
    builders = {**PLAN_BUILDERS, "fixed": lambda base, store: bad}
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"builder": "fixed"}))
    with pytest.raises(PlanError, match="summary-a"):
        load_plan(spec, store, builders, STAGES)


def test_the_builder_refuses_an_undeclared_output_at_once(tmp_path: Path) -> None:
    plan = PlanBuilder()
    params = DirectoryParams(directory=str(tmp_path), fingerprint=directory_fingerprint(tmp_path))
    made = plan.add("tree-a", directory_tree, params)
    with pytest.raises(PlanError, match=r"'trees' is not an output of stage 'directory-tree' \(it declares: tree\)"):
        made["trees"]


def test_an_unknown_input_and_a_missing_required_one_are_refused(tmp_path: Path) -> None:
    plan = PlanBuilder()
    params = DirectoryParams(directory=str(tmp_path), fingerprint=directory_fingerprint(tmp_path))
    made = plan.add("tree-a", directory_tree, params)
    plan.add("summary-a", tree_summary, NoParams(), tre=made["tree"])
    with pytest.raises(PlanError, match="input 'tre' is not an input of stage 'tree-summary' \\(its inputs: tree\\)"):
        plan.build()
    missing = PlanBuilder()
    missing.add("summary-a", tree_summary, NoParams())
    with pytest.raises(PlanError, match="input 'tree' is required by stage 'tree-summary'"):
        missing.build()


def test_a_source_of_the_wrong_kind_is_refused(store: Store) -> None:
    blob = store.put_bytes(b"not a tree")
    plan = PlanBuilder()
    plan.add("summary-a", tree_summary, NoParams(), tree=blob)
    with pytest.raises(PlanError, match=r"expects a 'tree' document, but .* is None"):
        plan.build(store)


def test_digest_types_accept_exactly_their_kind() -> None:
    assert accepts(Digest, TreeDigest) and accepts(TreeDigest, TreeDigest)
    assert not accepts(TreeDigest, Digest) and not accepts(TreeDigest, Ref[TreeSummary])
    assert accepts(Ref[TreeSummary], Ref[TreeSummary]) and Ref[TreeSummary] is Ref[TreeSummary]


class _Wrong(Ports):
    tree: TreeDigest


def test_a_stage_that_returns_an_output_of_another_kind_is_refused(context: StageContext) -> None:
    """The engine checks outputs against the declaration too: a blob is not a tree."""

    @stage("mislabels", version=1, kind=StageKind.DETERMINISTIC)
    def mislabels(context: StageContext, inputs: _Wrong, params: NoParams) -> _Wrong:
        return _Wrong(tree=context.store.put_bytes(b"bytes, not a tree"))

    tree = tree_from_entries(context.store, [])
    with pytest.raises(StageError, match="output 'tree' must be a 'tree' document"):
        execute(context, mislabels, {"tree": tree}, NoParams())


class _Loose(Ports):
    count: int


def test_a_port_that_is_not_a_digest_cannot_be_declared() -> None:
    with pytest.raises(StageError, match=r"_Loose\.count: a port must be a digest type"):

        @stage("loose", version=1, kind=StageKind.DETERMINISTIC)
        def loose(context: StageContext, inputs: _Loose, params: NoParams) -> _Loose:
            return inputs
