"""The suite manifest contract: the example suite loads, its pins hold, and a broken suite is refused by name."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from example_suite import EXAMPLE

from bench.errors import ContractError
from bench.gateway import Mode
from bench.suite.suite import (
    WORKSPACE_PLACEHOLDER,
    ChallengeCategory,
    Suite,
    load_suite,
    open_suite,
    render_policy,
)

REPO = EXAMPLE.parents[1]
PIN_ENV = {**os.environ, "PYTHONPATH": str(REPO)}  # a copied pin.py cannot find the repository by its own path


def _copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLE, tmp_path / "suite", ignore=shutil.ignore_patterns("__pycache__")))


def _edit_manifest(root: Path, change) -> None:  # type: ignore[no-untyped-def]
    document = json.loads((root / "suite.json").read_text())
    change(document)
    (root / "suite.json").write_text(json.dumps(document))


def test_the_example_suite_loads_with_one_challenge_of_each_category(suite: Suite) -> None:
    manifest = suite.manifest
    assert manifest.gateway_mode is Mode.POLICY and manifest.attempts == 2 and manifest.model
    assert sorted(c.entry.category for c in suite.challenges) == sorted(ChallengeCategory)
    assert [c.manifest.challenge_id for c in suite.challenges] == [c.challenge_id for c in manifest.challenges]
    assert suite.bundle.is_file() and suite.fixture.graph_arm(manifest.fixture.graph_arm)


def test_every_pin_matches() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "pin.py"), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_pin_check_names_a_stale_pin_and_pinning_repairs_it(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    (root / "rule-letter-case" / "verify.py").write_text("raise SystemExit(0)\n")
    with pytest.raises(ContractError, match=r"verify\.py has SHA-256"):
        open_suite(root)
    stale = subprocess.run(
        [sys.executable, str(root / "pin.py"), "--check"], capture_output=True, text=True, env=PIN_ENV, check=False
    )
    assert stale.returncode == 1 and "rule-letter-case/challenge.json verifier" in stale.stdout
    subprocess.run([sys.executable, str(root / "pin.py")], check=True, capture_output=True, env=PIN_ENV)
    assert open_suite(root).challenge("rule-letter-case").manifest.verifier.asset.sha256


def test_a_changed_policy_is_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    (root / "harbor-holds" / "policy.json").write_text("{}")
    with pytest.raises(ContractError, match=r"policy\.json has SHA-256"):
        open_suite(root)


def test_load_suite_names_a_missing_manifest(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match=r"cannot read the suite manifest .*suite\.json"):
        load_suite(tmp_path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(extra=1), "extra"),
        (lambda d: d["project"].update(commit="f60e250"), "commit"),
        (lambda d: d["challenges"][3].pop("policy"), "needs a policy for every challenge"),
        (lambda d: d["challenges"].append(dict(d["challenges"][0])), "repeated: harbor-holds"),
        (lambda d: d["challenges"][0].update(directory="/abs/harbor-holds"), "directory"),
        (lambda d: d.update(attempts=0), "attempts"),
    ],
)
def test_load_suite_refuses_a_broken_manifest(tmp_path: Path, change, message: str) -> None:  # type: ignore[no-untyped-def]
    root = _copy(tmp_path)
    _edit_manifest(root, change)
    with pytest.raises(ContractError, match=message):
        load_suite(root / "suite.json")


def test_open_suite_refuses_a_challenge_whose_id_is_not_its_directory(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    (root / "rule-letter-case").rename(root / "letter-case")
    _edit_manifest(root, lambda d: d["challenges"][3].update(directory="letter-case"))
    with pytest.raises(ContractError, match="names challenge 'rule-letter-case', but its directory says 'letter-case'"):
        open_suite(root)


def test_open_suite_refuses_an_unknown_graph_arm_and_a_missing_bundle(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    _edit_manifest(root, lambda d: d["fixture"].update(graph_arm="elsewhere"))
    with pytest.raises(ContractError, match="no graph arm 'elsewhere'"):
        open_suite(root)
    _edit_manifest(root, lambda d: d["fixture"].update(graph_arm="backfilled"))
    (root / "project.bundle").unlink()
    with pytest.raises(ContractError, match=r"project bundle .* does not exist"):
        open_suite(root)


def test_policy_is_rendered_for_the_workspace(suite: Suite) -> None:
    rendered = suite.policy("transaction-memo", "/workspace")
    assert WORKSPACE_PLACEHOLDER.encode() not in rendered and b'"/workspace/tallybook/ledger.py"' in rendered
    assert render_policy(b'{"p": "{workspace}/a"}', "/w-1/x_y") == b'{"p": "/w-1/x_y/a"}'
    for unsafe in ("workspace", '/w"x', "/w\\x", "/w x"):
        with pytest.raises(ContractError, match="cannot be put into a policy"):
            render_policy(b"{}", unsafe)


def test_memory_declaration_joins_fixture_phrases_and_challenge_markers(suite: Suite) -> None:
    memory = suite.memory("transaction-memo")
    assert memory.phrases == suite.fixture.memory_phrases
    assert memory.anchored_paths == ("tallybook/upgrade.py",)
    with pytest.raises(ContractError, match="no challenge 'absent'"):
        suite.memory("absent")
