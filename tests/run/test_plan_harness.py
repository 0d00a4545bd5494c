"""The harness a suite runs under, chosen per run (`run/demo --harness`), checked before anything is built.

A suite declares its model for its own harness (``model``) and for each other it may run under (``models``): a
run under a harness it declares none for is refused naming the harness and the field; a policy rule whose tool call
that harness's client cannot run (Codex carries an Edit as a patch of whole lines) is refused naming the challenge
and the rule; an unknown ``--harness`` is one line (one JSON object with ``--json``) listing the known ones.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from demo_runs import REPO, bench_command

from bench.errors import ContractError
from bench.run.plan_harness import suite_harness
from bench.scaffold import pin_suite
from bench.suite.suite import SuiteManifest, load_suite, open_suite

EXAMPLE = REPO / "challenges" / "example"


def _copy(tmp_path: Path, **changed: Any) -> Path:
    """The example suite copied, its manifest's top-level fields ``changed`` (None: left out)."""
    suite = tmp_path / "suite"
    shutil.copytree(EXAMPLE, suite, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    declared = json.loads((suite / "suite.json").read_text())
    declared.update(changed)
    (suite / "suite.json").write_text(json.dumps({k: v for k, v in declared.items() if v is not None}, indent=2))
    return suite


def test_the_example_declares_a_model_for_each_harness_it_runs_under() -> None:
    manifest = load_suite(EXAMPLE)
    assert manifest.model_for("claude-code") == "claude-sonnet-4-5"
    assert manifest.model_for("codex") == "gpt-5.5"  # a Codex catalogue slug: its prompt offers apply_patch
    assert suite_harness(open_suite(EXAMPLE), (), "codex").name == "codex"
    assert suite_harness(open_suite(EXAMPLE), ()).name == "claude-code"


def test_a_suite_without_models_keeps_its_digest() -> None:
    declared = json.loads((EXAMPLE / "suite.json").read_text())
    declared.pop("models")
    manifest = SuiteManifest.model_validate_json(json.dumps(declared))
    assert "models" not in manifest.model_dump(mode="json")
    assert manifest.model_dump(mode="json") == SuiteManifest.model_validate_json(
        json.dumps({**declared, "models": {}})
    ).model_dump(mode="json")


def test_a_run_under_a_harness_the_suite_declares_no_model_for_is_refused_naming_it(tmp_path: Path) -> None:
    suite = open_suite(_copy(tmp_path, models=None))
    with pytest.raises(ContractError, match=r"declares no model for harness 'codex'.*`models`") as refused:
        suite_harness(suite, (), "codex")
    assert refused.value.field == "models" and refused.value.actual == "codex"
    assert suite_harness(suite, ()).name == "claude-code"  # its own harness runs on `model`


@pytest.mark.parametrize(
    ("models", "message"),
    [
        ({"claude-code": "x"}, r"`models` names the suite's own harness 'claude-code'"),
        ({"gemini-cli": "x"}, r"unknown harness 'gemini-cli'; known harnesses: claude-code, codex"),
    ],
)
def test_models_name_other_known_harnesses(models: dict[str, str], message: str) -> None:
    declared = json.loads((EXAMPLE / "suite.json").read_text())
    with pytest.raises(ValueError, match=message):
        SuiteManifest.model_validate_json(json.dumps({**declared, "models": models}))


def test_a_policy_call_the_harness_cannot_run_is_refused_naming_the_challenge_and_the_rule(tmp_path: Path) -> None:
    suite = _copy(tmp_path)
    path = suite / "rule-letter-case" / "policy.json"
    policy = json.loads(path.read_text())
    rule = policy["rules"][0]
    rule["reply"].append(
        {"type": "tool_use", "name": "Edit", "input": {"file_path": "a.py", "old_string": "x", "new_string": "y"}}
    )
    path.write_text(json.dumps(policy, indent=2))
    pin_suite(suite)
    opened = open_suite(suite)
    with pytest.raises(ContractError, match=r"challenge 'rule-letter-case', policy rule '[^']+': harness 'codex'"):
        suite_harness(opened, (), "codex")
    with pytest.raises(ContractError, match=r"whole lines") as refused:
        suite_harness(opened, (), "codex")
    assert rule["name"] in refused.value.message and refused.value.field == "policy"
    assert suite_harness(opened, ()).name == "claude-code"  # Claude Code runs the policy's calls as written


def test_an_unknown_harness_on_the_command_line_is_one_line_naming_the_known_ones(tmp_path: Path) -> None:
    made = bench_command(tmp_path, "init", str(tmp_path / "project"))
    assert made.returncode == 0, made.stderr
    plain = bench_command(tmp_path / "project", "demo", "--harness", "gemini-cli")
    assert plain.returncode == 2 and plain.stdout == ""
    (line,) = plain.stderr.strip().splitlines()
    assert "argument --harness: invalid choice: 'gemini-cli' (choose from 'claude-code', 'codex')" in line
    as_json = bench_command(tmp_path / "project", "--json", "demo", "--harness", "gemini-cli")
    (only,) = as_json.stdout.splitlines()
    error = json.loads(only)["error"]
    assert error["code"] == "usage" and "'claude-code', 'codex'" in error["message"]
    assert as_json.returncode == plain.returncode
