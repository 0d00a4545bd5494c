"""A suite run at several distractor pool sizes: one pool per size past zero, every challenge's attempts once per
size, each size its own comparability key, and certification over the largest pool (every smaller one is its
prefix). The plan is built and checked against the stages' declarations, as `doit` loads it; nothing runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.analysis import ComparabilityKey
from bench.errors import ContractError
from bench.pipeline.plan import Upstream
from bench.run.prereg_freeze import freeze
from bench.run.suite_plan import suite_plan
from bench.store import Store
from bench.suite.suite import open_suite

REPO = Path(__file__).resolve().parents[2]


def _suite(base: Path, sizes: list[int]) -> Path:
    target = base / "challenges" / "example"
    shutil.copytree(REPO / "challenges" / "example", target, ignore=shutil.ignore_patterns("project-src"))
    manifest = json.loads((target / "suite.json").read_text())
    manifest["fixture"]["pool_sizes"] = sizes
    (target / "suite.json").write_text(json.dumps(manifest))
    freeze(open_suite(target), base / "manifests" / "example")
    return target


def test_every_challenge_runs_once_per_pool_size_each_its_own_key(tmp_path: Path) -> None:
    _suite(tmp_path, [0, 50])
    plan = suite_plan(tmp_path, Store.in_memory(), "challenges/example", attempts=1)
    by_name = {invocation.name: invocation for invocation in plan.invocations}
    assert [name for name in by_name if name.startswith("pool-")] == ["pool-50"]  # no pool to draw at size 0
    pool = by_name["pool-50"]
    assert pool.params["size"] == 50 and pool.params["pool"]["seed"] == 38  # type: ignore[index,call-overload]
    drawn = Upstream(invocation="pool-50", output="pool")
    for challenge in ("harbor-holds", "rule-letter-case"):
        assert {f"pair-{challenge}-pool0-1", f"pair-{challenge}-pool50-1"} <= set(by_name)
        noisy, quiet = by_name[f"pair-{challenge}-pool50-1"], by_name[f"pair-{challenge}-pool0-1"]
        assert noisy.inputs["distractors"] == drawn and "distractors" not in quiet.inputs
        assert by_name[f"certify-{challenge}"].inputs["distractors"] == drawn
        keys = {
            ComparabilityKey.model_validate_json(
                json.dumps(by_name[f"record-{challenge}-pool{size}-1-reference"].params["key"])
            )
            for size in (0, 50)
        }
        assert sorted(key.distractors for key in keys) == [0, 50] and len({key.key_id for key in keys}) == 2
    oracle = by_name["pair-harbor-holds-pool50-1"].params["oracle"]
    assert oracle == ["adr/0002-drop-card-holds.md", "issues/0014-groceries-counted-twice.md"]


def test_a_pool_size_past_the_fixture_s_pool_is_refused_before_anything_runs(tmp_path: Path) -> None:
    target = tmp_path / "example"
    shutil.copytree(REPO / "challenges" / "example", target, ignore=shutil.ignore_patterns("project-src"))
    manifest = json.loads((target / "suite.json").read_text())
    manifest["fixture"]["pool_sizes"] = [0, 501]
    (target / "suite.json").write_text(json.dumps(manifest))
    with pytest.raises(ContractError, match=r"pools at most 500 distractor document\(s\); the suite asks for \[501\]"):
        open_suite(target)


def test_an_oracle_that_is_no_evidence_document_is_refused(tmp_path: Path) -> None:
    """A distractor's path, or a typo, named as a challenge's oracle is refused when the suite is opened."""
    target = tmp_path / "example"
    shutil.copytree(REPO / "challenges" / "example", target, ignore=shutil.ignore_patterns("project-src"))
    manifest = json.loads((target / "suite.json").read_text())
    manifest["challenges"][0]["oracle"] = ["adr/fleetline-1004-pending-rows-are-skipped-at.md"]
    (target / "suite.json").write_text(json.dumps(manifest))
    with pytest.raises(ContractError, match="an oracle is an evidence document, never a distractor"):
        open_suite(target)
