"""Preregistration: frozen before any run; anything that decides an outcome moved (the challenge manifest's fields,
the policy, a memory system's declaration) refuses the run by name, until a recorded correction."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.analysis.admission import ReasonCode
from bench.analysis.prereg import PreregistrationMoved, Supersession, load_preregistrations
from bench.contracts import canonical_bytes
from bench.contracts.files import read_contract
from bench.errors import ContractError
from bench.memory import hook_settings
from bench.run.prereg_freeze import correction_moves, current_preregistration, freeze, record_correction
from bench.suite.suite import open_suite
from tests.analysis.attempt_factory import arm, attempt, key, record_digest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def suite_copy(tmp_path: Path) -> Path:
    target = tmp_path / "example"
    shutil.copytree(REPO / "challenges" / "example", target, ignore=shutil.ignore_patterns("project-src"))
    return target


def test_the_committed_preregistrations_match_the_bundled_suite() -> None:
    """v2 records the static baseline and names it; v3 the distractor pool (and what it moved: the fixture, whose
    frozen form now holds the pool, the pool size and the oracles, and the reference memory's restore timeout);
    and its v4 the pool; the next (v4, the control's v5) the fourth system, memory-keeper, and each policy's search
    twin for its tool; the last the systems in harness-neutral terms and a model per harness. Each earlier version
    stays as it was frozen, superseded by the next."""
    suite = open_suite(REPO / "challenges" / "example")
    versions = load_preregistrations(REPO / "manifests" / "example")
    for loaded in suite.challenges:
        prereg = current_preregistration(suite, loaded, REPO / "manifests" / "example", attempts=2)
        v1, v2, *later, keeper, neutral = versions[loaded.manifest.challenge_id]
        assert (
            neutral == prereg and neutral.supersedes == keeper.digest and neutral.frozen.models == {"codex": "gpt-5.5"}
        )
        assert correction_moves(keeper, neutral) == [
            "memory_systems.reference",
            "memory_systems.static-notes",
            "models.codex",
        ]
        if loaded.manifest.challenge_id == "rule-letter-case":
            policy, v3 = later
            assert policy.supersedes == v2.digest and correction_moves(v2, policy) == ["model_access.policy"]
            previous = policy
        else:
            (v3,) = later
            previous = v2
        assert v3.supersedes == previous.digest
        assert prereg.version == 4 + len(later) and prereg.frozen.model == suite.manifest.model
        assert v2.supersedes == v1.digest and v1.frozen.analysis.baseline is None
        assert correction_moves(v1, v2) == ["memory_systems.static-notes", "analysis.baseline"]
        assert "500 distractor documents" in (v3.correction or "")
        assert correction_moves(previous, v3) == ["fixture", "memory_systems.reference"]
        # The fourth system, and each policy's search twin for its tool.
        assert keeper.supersedes == v3.digest and "mcp-memory-keeper" in (keeper.correction or "")
        assert correction_moves(v3, keeper) == ["memory_systems.memory-keeper", "model_access.policy"]
        assert v3.frozen.analysis.baseline == suite.manifest.baseline == "static-notes"
        assert v3.frozen.analysis.minimum_detectable_effect is not None


def test_a_correction_states_the_baseline_the_suite_now_names(suite_copy: Path, tmp_path: Path) -> None:
    manifest = json.loads((suite_copy / "suite.json").read_text())
    manifest.pop("baseline")
    (suite_copy / "suite.json").write_text(json.dumps(manifest))
    freeze(open_suite(suite_copy), tmp_path / "preregs")
    manifest["baseline"] = "static-notes"
    (suite_copy / "suite.json").write_text(json.dumps(manifest))
    suite = open_suite(suite_copy)
    with pytest.raises(ContractError, match="froze the baseline None, the suite now names 'static-notes'"):
        current_preregistration(suite, suite.challenge("harbor-holds"), tmp_path / "preregs", attempts=1)
    _, old, corrected = record_correction(suite, suite.challenge("harbor-holds"), tmp_path / "preregs", "a baseline")
    assert (old.frozen.analysis.baseline, corrected.frozen.analysis.baseline) == (None, "static-notes")
    assert correction_moves(old, corrected) == ["analysis.baseline"]
    assert (
        current_preregistration(suite, suite.challenge("harbor-holds"), tmp_path / "preregs", attempts=1) == corrected
    )


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
    reason = "server-memory restores a larger graph: a longer restore timeout"
    path, old, corrected = record_correction(suite, suite.challenge("harbor-holds"), tmp_path / "preregs", reason)
    assert path.name == "v2.json" and corrected.supersedes == old.digest and corrected.correction == reason
    assert correction_moves(old, corrected) == ["memory_systems.server-memory"]
    assert (
        current_preregistration(suite, suite.challenge("harbor-holds"), tmp_path / "preregs", attempts=1).version == 2
    )
    with pytest.raises(ContractError, match="already freezes exactly these inputs"):
        record_correction(suite, suite.challenge("harbor-holds"), tmp_path / "preregs", "again")


def _edit_challenge(suite_dir: Path, challenge: str, field: str, value: object) -> None:
    path = suite_dir / challenge / "challenge.json"
    manifest = json.loads(path.read_text())
    manifest[field] = value
    path.write_text(json.dumps(manifest))


def _edit_policy(suite_dir: Path, challenge: str) -> None:
    """Change the challenge's policy (the model, in policy mode) and re-pin it, as an honest edit would."""
    policy_path = suite_dir / challenge / "policy.json"
    policy = json.loads(policy_path.read_text())
    policy["rules"] = policy["rules"][1:]
    policy_path.write_text(json.dumps(policy))
    manifest = json.loads((suite_dir / "suite.json").read_text())
    entry = next(e for e in manifest["challenges"] if e["directory"] == challenge)
    entry["policy"]["sha256"] = hashlib.sha256(policy_path.read_bytes()).hexdigest()
    (suite_dir / "suite.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (
            lambda d: _edit_challenge(d, "harbor-holds", "allowed_output_paths", ["ANSWER.md", "tallybook"]),
            "challenge.allowed_output_paths",
        ),
        (lambda d: _edit_challenge(d, "harbor-holds", "agent_timeout_seconds", 5), "challenge.agent_timeout_seconds"),
        (lambda d: _edit_policy(d, "harbor-holds"), "model_access.policy"),
    ],
    ids=["allowed-output-paths", "timeout", "policy"],
)
def test_an_edited_outcome_input_refuses_the_run_naming_the_field_and_the_command(
    suite_copy: Path, tmp_path: Path, edit: Callable[[Path], None], field: str
) -> None:
    freeze(open_suite(suite_copy), tmp_path / "preregs")
    edit(suite_copy)
    suite = open_suite(suite_copy)
    with pytest.raises(PreregistrationMoved) as moved:
        current_preregistration(suite, suite.challenge("harbor-holds"), tmp_path / "preregs", attempts=1)
    assert [m.field for m in moved.value.moved] == [field] and moved.value.field == field
    assert field in str(moved.value) and "stele-bench prereg correct" in str(moved.value)
    assert current_preregistration(suite, suite.challenge("rule-letter-case"), tmp_path / "preregs", attempts=1)


def test_prereg_correct_and_supersede_commands_leave_records(suite_copy: Path, tmp_path: Path) -> None:
    into = tmp_path / "manifests"
    command = [sys.executable, "-m", "bench", "--json", "prereg"]
    subprocess.run([*command, "freeze", str(suite_copy), "--into", str(into)], check=True, capture_output=True)
    _edit_challenge(suite_copy, "harbor-holds", "agent_timeout_seconds", 600)
    done = subprocess.run(
        [
            *command,
            "correct",
            str(suite_copy),
            "harbor-holds",
            "--reason",
            "the build needs longer",
            "--into",
            str(into),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["version"] == 2 and answer["moved"] == ["challenge.agent_timeout_seconds"]
    refused = subprocess.run(
        [*command, "correct", str(suite_copy), "harbor-holds", "--reason", "", "--into", str(into)],
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0 and "needs a reason" in json.loads(refused.stdout)["error"]["message"]
    assert sorted(p.name for p in (into / "example" / "harbor-holds").iterdir()) == ["v1.json", "v2.json"]


def test_prereg_supersede_records_every_published_run_under_the_replaced_version(
    suite_copy: Path, tmp_path: Path
) -> None:
    into = tmp_path / "manifests"
    directory = into / "example"
    freeze(open_suite(suite_copy), directory)
    v1 = load_preregistrations(directory)["harbor-holds"][0]
    published = tmp_path / "published"
    runs = [
        attempt(n, arm(False), arm(True), the_key=key(challenge="harbor-holds", manifest=canonical_bytes(v1)))
        for n in (1, 2)
    ]
    other = attempt(3, arm(True), arm(True), the_key=key(challenge="harbor-holds"))
    for record in (*runs, other):
        path = published / "records" / f"{record_digest(record).hex}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(canonical_bytes(record))
    command = [sys.executable, "-m", "bench", "--json", "prereg", "supersede", str(suite_copy), "harbor-holds"]
    command += ["--published", str(published), "--into", str(into)]
    early = subprocess.run(command, capture_output=True, text=True)
    assert early.returncode != 0 and "record the correction first" in json.loads(early.stdout)["error"]["message"]
    _edit_challenge(suite_copy, "harbor-holds", "agent_timeout_seconds", 600)
    record_correction(open_suite(suite_copy), open_suite(suite_copy).challenge("harbor-holds"), directory, "longer")
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    written = read_contract(directory / "harbor-holds" / "superseded-v1.json", Supersession, "supersession")
    assert written.superseded == v1.digest and written.reason == "longer"
    assert sorted(d.record for d in written.decisions) == sorted(record_digest(r) for r in runs)
    assert {d.reason for d in written.decisions} == {ReasonCode.SUPERSEDED_BY_CORRECTION}
    again = subprocess.run(command, capture_output=True, text=True)
    assert again.returncode != 0 and "never overwritten" in json.loads(again.stdout)["error"]["message"]


def _without_memory_keeper(suite: Path, manifest: dict[str, Any]) -> None:
    """``manifest`` (the suite's, written by the caller) and its policies as they stood before memory-keeper."""
    manifest["memory_systems"] = [m for m in manifest["memory_systems"] if m["name"] != "memory-keeper"]
    for entry in manifest["challenges"]:
        path = suite / entry["directory"] / entry["policy"]["path"]
        policy = json.loads(path.read_text())
        policy["rules"] = [r for r in policy["rules"] if r["when"].get("offers") != ["mcp__keeper__context_search"]]
        path.write_text(json.dumps(policy, indent=2, ensure_ascii=False) + "\n")
        entry["policy"]["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()


def _before_neutral_terms(manifest: dict[str, Any]) -> None:
    """``manifest`` as the example stood before its systems were declared neutrally and it named a model per
    harness: the reference's hooks in Claude Code's settings form, the notes mounted at Claude Code's path."""
    manifest.pop("models")
    systems = {system["name"]: system for system in manifest["memory_systems"]}
    attachment = systems["reference"]["attachment"]
    attachment["settings"] = hook_settings()
    del attachment["hooks"]
    systems["static-notes"]["attachment"] = {"mounts": [{"location": "notes", "target": "/home/dev/.claude/CLAUDE.md"}]}


def test_a_suite_that_never_states_a_pool_keeps_the_preregistration_it_was_frozen_with(
    suite_copy: Path, tmp_path: Path
) -> None:
    """The pool, the scoring depths, the pool sizes and the oracles are frozen only once a suite states them: the
    example as it stood before them (v2) is still unmoved under today's code, so no other suite's preregistration
    moves for fields it never had."""
    fixture = json.loads((suite_copy / "fixture" / "fixture.json").read_text())
    del fixture["distractors"], fixture["retrieval_k"]
    (probe,) = [p for p in fixture["probes"] if p["name"] == "old-copy-erased-data"]
    probe["query"] = (
        "an outdated copy of the app opened the shared file and threw away information it did not recognise"
    )
    (suite_copy / "fixture" / "fixture.json").write_text(json.dumps(fixture))
    manifest = json.loads((suite_copy / "suite.json").read_text())
    del manifest["fixture"]["pool_sizes"]
    for entry in manifest["challenges"]:
        entry.pop("oracle", None)
    manifest["memory_systems"][0]["timeouts"]["restore_seconds"] = 300
    _without_memory_keeper(suite_copy, manifest)  # it came after the pool
    _before_neutral_terms(manifest)  # and so did the neutral declarations
    (suite_copy / "suite.json").write_text(json.dumps(manifest))
    before = tmp_path / "preregs"
    for challenge in ("harbor-holds", "transaction-memo", "spreadsheet-export", "rule-letter-case"):
        (before / challenge).mkdir(parents=True)
        # the low-memory control's v3 is its policy's correction, made before the pool
        versions = ("v1.json", "v2.json", "v3.json") if challenge == "rule-letter-case" else ("v1.json", "v2.json")
        for version in versions:
            shutil.copy(REPO / "manifests" / "example" / challenge / version, before / challenge / version)
    suite = open_suite(suite_copy)
    assert suite.pool_sizes == (0,)
    for loaded in suite.challenges:
        expected = 3 if loaded.manifest.challenge_id == "rule-letter-case" else 2
        assert current_preregistration(suite, loaded, before, attempts=2).version == expected
