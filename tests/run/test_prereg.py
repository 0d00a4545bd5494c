"""Preregistration: frozen before any run; a moved prompt, verifier, model or memory system declaration refuses the
run by name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.analysis.prereg import PreregistrationMoved, correct, load_preregistrations
from bench.errors import ContractError
from bench.run.prereg import current_preregistration, freeze, observed_inputs
from bench.suite.suite import open_suite

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def suite_copy(tmp_path: Path) -> Path:
    target = tmp_path / "example"
    shutil.copytree(REPO / "challenges" / "example", target, ignore=shutil.ignore_patterns("project-src"))
    return target


def test_the_committed_preregistrations_match_the_bundled_suite() -> None:
    suite = open_suite(REPO / "challenges" / "example")
    for loaded in suite.challenges:
        prereg = current_preregistration(suite, loaded, REPO / "manifests" / "example", attempts=2)
        assert prereg.version == 1 and prereg.frozen.model == suite.manifest.model


def test_freeze_writes_once_and_never_overwrites(suite_copy: Path, tmp_path: Path) -> None:
    suite = open_suite(suite_copy)
    written = freeze(suite, tmp_path / "preregs")
    assert sorted(path.parent.name for path in written) == sorted(c.manifest.challenge_id for c in suite.challenges)
    assert freeze(suite, tmp_path / "preregs") == []


def test_a_moved_prompt_refuses_the_run_naming_the_field(suite_copy: Path, tmp_path: Path) -> None:
    freeze(open_suite(suite_copy), tmp_path / "preregs")
    manifest_path = suite_copy / "harbor-holds" / "challenge.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["prompt"] += " Be brief."
    manifest_path.write_text(json.dumps(manifest))
    suite = open_suite(suite_copy)
    with pytest.raises(PreregistrationMoved, match="prompt"):
        current_preregistration(suite, suite.challenge("harbor-holds"), tmp_path / "preregs", attempts=1)
    untouched = suite.challenge("rule-letter-case")
    assert current_preregistration(suite, untouched, tmp_path / "preregs", attempts=1).version == 1


def test_more_attempts_than_frozen_are_refused(suite_copy: Path, tmp_path: Path) -> None:
    suite = open_suite(suite_copy)
    freeze(suite, tmp_path / "preregs")
    with pytest.raises(ContractError, match="froze at most 5"):
        current_preregistration(suite, suite.challenges[0], tmp_path / "preregs", attempts=6)


def test_a_missing_preregistration_is_an_error_that_says_how_to_freeze(suite_copy: Path, tmp_path: Path) -> None:
    suite = open_suite(suite_copy)
    with pytest.raises(ContractError, match="stele-bench prereg freeze"):
        current_preregistration(suite, suite.challenges[0], tmp_path / "nowhere", attempts=1)


def test_a_changed_memory_system_declaration_refuses_the_run_until_a_new_version_records_it(
    suite_copy: Path, tmp_path: Path
) -> None:
    freeze(open_suite(suite_copy), tmp_path / "preregs")
    manifest = json.loads((suite_copy / "suite.json").read_text())
    manifest["memory_systems"][1]["timeouts"]["restore_seconds"] = 90
    (suite_copy / "suite.json").write_text(json.dumps(manifest))
    suite = open_suite(suite_copy)
    with pytest.raises(PreregistrationMoved, match=r"memory_systems\.server-memory") as moved:
        current_preregistration(suite, suite.challenge("harbor-holds"), tmp_path / "preregs", attempts=1)
    assert [m.field for m in moved.value.moved] == ["memory_systems.server-memory"]
    prereg = load_preregistrations(tmp_path / "preregs")["harbor-holds"][-1]
    observed = observed_inputs(suite, suite.challenge("harbor-holds"), prereg.frozen.budget, prereg.frozen.analysis)
    corrected = correct(prereg, observed, "server-memory restores a larger graph: a longer restore timeout")
    path = tmp_path / "preregs" / "harbor-holds" / "v2.json"
    path.write_text(json.dumps(corrected.model_dump(mode="json")))
    assert (
        current_preregistration(suite, suite.challenge("harbor-holds"), tmp_path / "preregs", attempts=1).version == 2
    )
