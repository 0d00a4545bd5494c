"""The example project: real git objects with a history, hand-written agent memory for redaction to remove, and
no trace of what only the evidence knows. The whole suite passes certification, the real packaging gate."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from example_suite import EXAMPLE

from bench.packaging import (
    CertifyInputs,
    CertifyParams,
    Verdict,
    certify_surfaces,
    materialize,
    open_source,
    redact_tree,
)
from bench.store import Store, tree_from_directory
from bench.suite.suite import Suite


def _history(suite: Suite) -> tuple[list[bytes], list[bytes]]:
    """Every commit message and every blob reachable from the pinned commit."""
    with open_source(str(suite.bundle)) as source:
        messages, blobs, pending, seen = [], [], [suite.manifest.project.commit.encode()], set()
        while pending:
            commit = source.get(pending.pop())
            messages.append(commit.message)
            pending.extend(commit.parents)
            for entry in source.objects.iter_tree_contents(commit.tree):
                if entry.sha not in seen:
                    seen.add(entry.sha)
                    blobs.append(source.get(entry.sha).as_raw_string())
    return messages, blobs


def test_the_bundle_holds_the_pinned_commit_and_its_history(suite: Suite) -> None:
    with open_source(str(suite.bundle)) as source:
        head = source.lookup_ref(b"refs/heads/main")
        assert head is not None and head.decode() == suite.manifest.project.commit
        paths = {entry.path for entry in source.objects.iter_tree_contents(source.get(head).tree)}
    assert {b"CLAUDE.md", b".cursor/rules/tallybook.mdc", b"tallybook/upgrade.py", b"tests/test_store.py"} <= paths
    messages, _ = _history(suite)
    assert 5 <= len(messages) <= 8


def test_the_generator_rebuilds_the_pinned_commit(suite: Suite) -> None:
    spec = importlib.util.spec_from_file_location("make_project", EXAMPLE / "make_project.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.build_repo().refs[module.BRANCH].decode() == suite.manifest.project.commit


def test_redaction_removes_the_hand_written_agent_memory(packaged: tuple[list[str], Path]) -> None:
    removed, tree = packaged
    assert sorted(removed) == [".cursor", ".cursor/rules", ".cursor/rules/tallybook.mdc", "CLAUDE.md"]
    assert not (tree / "CLAUDE.md").exists() and not (tree / ".cursor").exists()
    assert (tree / "tallybook" / "store.py").is_file()


def test_the_project_tests_run_and_pass(workspace: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "unittest"], cwd=workspace, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Ran 15 tests" in done.stderr


def test_code_and_history_do_not_say_what_only_the_evidence_knows(suite: Suite) -> None:
    secrets = {*suite.fixture.memory_phrases}
    for loaded in suite.challenges:
        secrets |= {*loaded.manifest.answer_phrases, *loaded.entry.identifiers}
    secrets |= {"95.85", "45.10", "38.75", "German locale", "decimal comma", "pending authorisation"}
    messages, blobs = _history(suite)
    for text in [*messages, *blobs]:
        lowered = text.decode().lower()
        assert not [s for s in secrets if s.lower() in lowered], text.decode()[:200]
    words = ("benchmark", "fixture", "experiment", "treatment", "control arm", "stele", "harness")
    assert not [w for w in words for text in [*messages, *blobs] if w in text.decode().lower()]


@pytest.mark.parametrize("challenge_id", ["harbor-holds", "transaction-memo", "spreadsheet-export", "rule-letter-case"])
def test_every_challenge_certifies_over_every_surface(suite: Suite, tmp_path: Path, challenge_id: str) -> None:
    store = Store(tmp_path / "store")
    with open_source(str(suite.bundle)) as source:
        receipt = materialize(store, source, suite.manifest.project.commit)
    loaded = suite.challenge(challenge_id)
    inputs = {
        "source": redact_tree(store, receipt.tree, suite.fixture.redact_paths).redacted,
        "evidence": tree_from_directory(store, suite.fixture_root / suite.fixture.evidence_corpus.path),
        "challenge": store.put_document(loaded.manifest),
        "runner/verifier": store.put_bytes((loaded.directory / loaded.manifest.verifier.asset.path).read_bytes()),
        "runner/policy": store.put_bytes((loaded.directory / "policy.json").read_bytes()),
    }
    for arm in suite.fixture.graph_arms:
        inputs[f"graph/{arm.name}"] = store.put_bytes((suite.fixture_root / arm.graph.path).read_bytes())
    report = certify_surfaces(store, CertifyInputs.from_flat(inputs, "certify"), CertifyParams(memory_phrases=()))
    assert report.verdict is Verdict.CERTIFIED, report.findings
