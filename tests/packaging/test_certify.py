"""Certification: a clean corpus passes, each of the five kinds fires on a planted case, ordinary prose never does."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from typing import Any

import pytest

from bench.builder import StageContext
from bench.builder.execution import execute
from bench.contracts import Digest, PortablePath
from bench.errors import ContractError, ObjectCorrupt
from bench.packaging import (
    CertificationReport,
    CertifyInputs,
    CertifyParams,
    FindingKind,
    MissingSurface,
    Verdict,
    certify_surfaces,
)
from bench.packaging.markers import _CREDENTIAL_NAMES, path_markers
from bench.packaging.patterns import AUTO_LOADED_CONTEXT_PATTERNS
from bench.run.catalogue import services
from bench.stages.certify import certify
from bench.store import EntryKind, FileEntry, Store, tree_from_entries
from bench.store.backends.packs import pack_path
from bench.suite import ChallengeManifest
from tests.packaging.challenge_fields import challenge_fields

PROSE = (
    b"To test the parser, spin up a temp directory with test fixtures and run it under each condition.\n"
    b"The robot arm trial used synthetic data; the ground truth labels live in data/labels.csv.\n"
    b"See benchmarks/ for the control loop timings. A negative number is an error.\n"
)
SOURCE = {
    "README.md": b"# acme web\n" + PROSE,
    "benchmarks/bench_parse.py": b"def bench_parse():\n    pass\n",
    "tests/fixtures/settings.json": b'{"label": "Check for Updates"}\n',
    "src/settings.rs": b'const LABEL: &str = "Check for Updates";\n',
    "docs/diffs.md": b"We review changes as unified diffs with `git diff -U3`.\n@@ is how a hunk starts.\n",
}
EVIDENCE = {"notes/2024-03-settings.md": b"Decision: labels come from one table.\n" + PROSE}
GRAPH: dict[str, Any] = {
    "project": "acme-web",
    "workspace": "main",
    "branch": "main",
    "nodes": [
        {"id": "n1", "kind": "decision", "body": "Spin up a temp directory with test fixtures before each run."},
        {"id": "n2", "kind": "note", "body": PROSE.decode()},
    ],
}
VERIFIER = b"#!/bin/sh\nexec cargo test --quiet settings_label\n"


def _tree(store: Store, files: dict[str, bytes]) -> Digest:
    return tree_from_entries(store, [FileEntry(PortablePath(p), EntryKind.FILE, d) for p, d in files.items()])


def _challenge(store: Store, **changes: Any) -> Digest:
    fields = challenge_fields(VERIFIER, **changes)
    return store.put_document(ChallengeManifest.model_validate_json(json.dumps(fields)))


def _inputs(store: Store, source: dict[str, bytes] = SOURCE, graph: Any = GRAPH, **changes: Any) -> dict[str, Digest]:
    return {
        "source": _tree(store, source),
        "evidence": _tree(store, EVIDENCE),
        "graph/memory": store.put_bytes(json.dumps(graph).encode()),
        "challenge": _challenge(store, **changes),
        "runner/verifier": store.put_bytes(VERIFIER),
    }


def _typed(store: Store, *args: Any, **changes: Any) -> CertifyInputs:
    return CertifyInputs.from_flat(_inputs(store, *args, **changes), "certify")


def _found(report: CertificationReport) -> set[tuple[str, str, str, str]]:
    return {(f.kind.value, f.surface, f.path, f.marker) for f in report.findings}


def test_a_clean_corpus_with_ordinary_prose_certifies(store: Store) -> None:
    report = certify_surfaces(store, _typed(store), CertifyParams(memory_phrases=()))
    assert report.findings == ()
    assert report.verdict is Verdict.CERTIFIED
    assert [s.surface for s in report.surfaces] == ["source", "evidence", "graph/memory", "challenge"]
    assert report.surfaces[0].scanned_bytes == sum(len(d) for d in SOURCE.values())


PLANTED = [
    pytest.param(
        {"CLAUDE.md": b"always run make\n"}, (FindingKind.AUTO_LOADED_CONTEXT, "CLAUDE.md", None), id="claude-md"
    ),
    pytest.param(
        {"web/.cursor/rules/a.mdc": b"x"}, (FindingKind.AUTO_LOADED_CONTEXT, "web/.cursor", None), id="cursor"
    ),
    pytest.param({".env": b"TOKEN=1\n"}, (FindingKind.SUSPICIOUS_METADATA, ".env", None), id="dotenv"),
    pytest.param({".git/HEAD": b"ref: refs/heads/main\n"}, (FindingKind.SUSPICIOUS_METADATA, ".git", None), id="git"),
    pytest.param(
        {"deploy/key.txt": b"x\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blb\n"},
        (FindingKind.SUSPICIOUS_METADATA, "deploy/key.txt", 2),
        id="private-key",
    ),
    pytest.param(
        {"scripts/check.sh": VERIFIER}, (FindingKind.SUSPICIOUS_METADATA, "scripts/check.sh", None), id="verifier"
    ),
    pytest.param(
        {"NOTES.md": b"a\nb\nbuilt for Stele-Bench runs\n"},
        (FindingKind.BENCHMARK_AWARENESS, "NOTES.md", 3),
        id="harness",
    ),
    pytest.param({"fix.patch": b"x"}, (FindingKind.PATCH_OR_DIFF, "fix.patch", None), id="patch"),
    pytest.param({"src/app.py.orig": b"x"}, (FindingKind.PATCH_OR_DIFF, "src/app.py.orig", None), id="orig"),
    pytest.param(
        {"docs/change.md": b"the change:\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n"},
        (FindingKind.PATCH_OR_DIFF, "docs/change.md", 4),
        id="hunk",
    ),
    pytest.param(
        {"docs/ui.md": b"The row now reads\nautomatic   update\n   CHECKS.\n"},
        (FindingKind.SOLUTION_LEAK, "docs/ui.md", 2),
        id="answer-phrase",
    ),
]


@pytest.mark.parametrize(("planted", "expected"), PLANTED)
def test_each_kind_fires_on_a_planted_file(
    store: Store, planted: dict[str, bytes], expected: tuple[FindingKind, str, int | None]
) -> None:
    report = certify_surfaces(store, _typed(store, SOURCE | planted), CertifyParams(memory_phrases=()))
    assert report.verdict is Verdict.REJECTED
    assert {(f.kind, f.path, f.line) for f in report.findings} == {expected}
    assert {f.surface for f in report.findings} == {"source"}


def test_the_stricter_terms_fire_on_identity_fields_but_never_on_node_bodies(store: Store) -> None:
    graph = GRAPH | {"project": "settings-fixture-treatment", "branch": "controlArm"}
    report = certify_surfaces(store, _typed(store, graph=graph), CertifyParams(memory_phrases=()))
    assert _found(report) == {
        ("benchmark-awareness", "graph/memory", "/project", "identity field names the experiment: fixture"),
        ("benchmark-awareness", "graph/memory", "/project", "identity field names the experiment: treatment"),
        ("benchmark-awareness", "graph/memory", "/branch", "identity field names the experiment: arm"),
        ("benchmark-awareness", "graph/memory", "/branch", "identity field names the experiment: control"),
        ("benchmark-awareness", "graph/memory", "/branch", "identity field names the experiment: control arm"),
    }


def test_node_bodies_are_checked_for_everything_that_applies_everywhere(store: Store) -> None:
    nodes = [
        {"id": "n3", "body": "made by stele_bench"},
        {"id": "n4", "body": "old\n@@ -10 +10,2 @@\n"},
        {"id": "n5", "body": "the label is Automatic Update Checks"},
    ]
    report = certify_surfaces(store, _typed(store, graph=GRAPH | {"nodes": nodes}), CertifyParams(memory_phrases=()))
    assert {(f.kind.value, f.path, f.line) for f in report.findings} == {
        ("benchmark-awareness", "/nodes/0/body", 1),
        ("patch-or-diff", "/nodes/1/body", 2),
        ("solution-leak", "/nodes/2/body", 1),
    }


def test_the_challenge_text_is_a_surface(store: Store) -> None:
    inputs = _inputs(store, follow_up_prompt="Now make it say automatic update checks everywhere.")
    report = certify_surfaces(store, CertifyInputs.from_flat(inputs, "certify"), CertifyParams(memory_phrases=()))
    assert _found(report) == {
        ("solution-leak", "challenge", "follow_up_prompt", "answer phrase 'automatic update checks'"),
    }


@pytest.mark.parametrize("missing", ["source", "evidence", "graph/memory", "challenge"])
def test_a_missing_surface_is_an_error_not_a_skipped_check(store: Store, missing: str) -> None:
    inputs = _inputs(store)
    del inputs[missing]
    with pytest.raises(MissingSurface, match=missing.split("/")[0]):
        certify_surfaces(store, CertifyInputs.from_flat(inputs, "certify"), CertifyParams(memory_phrases=()))


def test_the_only_opt_out_is_recorded_in_the_report(store: Store) -> None:
    inputs = _inputs(store)
    del inputs["source"]
    report = certify_surfaces(
        store,
        CertifyInputs.from_flat(inputs, "certify"),
        CertifyParams(memory_phrases=(), unchecked_corpus_allowed=True),
    )
    assert report.verdict is Verdict.CERTIFIED_CORPUS_UNCHECKED
    assert report.unchecked == ("source corpus: not given; allowed by STELE_BENCH_UNCHECKED_CORPUS_ALLOWED=1",)


def test_a_graph_that_cannot_be_read_is_refused(store: Store) -> None:
    inputs = _inputs(store) | {"graph/memory": store.put_bytes(b"SQLite format 3\x00...")}
    with pytest.raises(ContractError, match="graph/memory"):
        certify_surfaces(store, CertifyInputs.from_flat(inputs, "certify"), CertifyParams(memory_phrases=()))


def test_the_stage_records_a_rejection_and_a_rerun_executes_nothing(store: Store) -> None:
    inputs = _inputs(store, SOURCE | {"CLAUDE.md": b"x"})
    first = execute(StageContext(store, services()), certify, inputs, CertifyParams(memory_phrases=()))
    second = execute(StageContext(store, services()), certify, inputs, CertifyParams(memory_phrases=()))
    assert (first.executed, second.executed) == (True, False)
    report = store.get_document(first.outputs["report"], CertificationReport)
    assert report.verdict is Verdict.REJECTED and first.outputs == second.outputs


@pytest.mark.parametrize(
    "name",
    [
        *(pattern.rstrip("/").replace("*", "x").rsplit("/", 1)[-1] for pattern in AUTO_LOADED_CONTEXT_PATTERNS),
        *(glob.replace("*", "x") for glob in _CREDENTIAL_NAMES),
        ".git",
        ".svn",
        "fix.patch",
        "a.diff",
        "b.orig",
        "c.rej",
    ],
)
def test_every_name_a_path_finding_exists_for_passes_the_one_pass_prefilter(name: str) -> None:
    # path_markers rejects most names with one pattern before its checks; the pattern must let every name
    # through that any check would flag, wherever in a tree it sits.
    prefix = ".github/" if name == "instructions" else "deep/down/"
    assert list(path_markers(prefix + name)), f"{prefix + name} earns no finding"
    assert list(path_markers("stele-bench/ordinary.py")) == [(FindingKind.BENCHMARK_AWARENESS, "stele-bench")]


def test_a_corpus_already_holding_a_memory_phrase_is_a_finding(store: Store) -> None:
    """The memory's own surfaces hold its phrases by design; the source corpus and the prompt must not."""
    phrase = "labels come from one table"
    params = CertifyParams(memory_phrases=(phrase,))
    clean = certify_surfaces(store, _typed(store), params)
    assert clean.verdict is Verdict.CERTIFIED  # the evidence note holds the phrase: that is the memory
    planted = SOURCE | {"docs/labels.md": b"Why:\nLabels   come from\none table.\n"}
    report = certify_surfaces(store, _typed(store, planted), params)
    assert report.verdict is Verdict.REJECTED
    assert _found(report) == {("solution-leak", "source", "docs/labels.md", f"memory phrase {phrase!r}")}
    prompted = certify_surfaces(store, _typed(store, prompt=f"Remember: {phrase}."), params)
    assert _found(prompted) == {("solution-leak", "challenge", "prompt", f"memory phrase {phrase!r}")}
    assert (
        certify_surfaces(store, _typed(store, planted), CertifyParams(memory_phrases=())).verdict is Verdict.CERTIFIED
    )


def test_a_large_corpus_read_in_pack_order_names_every_finding_and_refuses_a_corrupt_file(store: Store) -> None:
    """More files than one index query takes, stored in an order unlike the walk's (as git packs a corpus), so
    they are read back in runs of pack neighbours: each finding still names its file, a blob two files share
    names both, and a file altered inside its pack stops certification."""
    source = {f"pkg{index % 7}/file{index:04}.txt": f"{index}\n".encode() * 300 for index in range(1200)}
    planted = {"pkg3/file0003.txt", "pkg0/file0700.txt", "pkg4/file1194.txt"}
    for path in planted:
        source[path] = source[path] + b"tuned for stele-bench\n"
    source["copy/of/file0700.txt"] = source["pkg0/file0700.txt"]
    inputs = _typed(store, source)
    report = certify_surfaces(store, inputs, CertifyParams(memory_phrases=()))
    assert _found(report) == {
        ("benchmark-awareness", "source", path, "stele-bench") for path in planted | {"copy/of/file0700.txt"}
    }
    assert report.surfaces[0].scanned_bytes == sum({Digest.of(data): len(data) for data in source.values()}.values())
    victim = Digest.of(source["pkg4/file0200.txt"])
    index = sqlite3.connect(store.backend.root / "index.sqlite")  # type: ignore[attr-defined]
    with contextlib.closing(index):
        pack, offset = index.execute("SELECT pack, pack_offset FROM objects WHERE hex = ?", (victim.hex,)).fetchone()
    with pack_path(store.backend.packs, pack).open("r+b") as file:  # type: ignore[attr-defined]
        file.seek(offset + 100)
        file.write(b"#")
    with pytest.raises(ObjectCorrupt, match=victim.hex):
        certify_surfaces(store, inputs, CertifyParams(memory_phrases=()))


def _with_pool(store: Store, pool: dict[str, bytes]) -> CertifyInputs:
    return CertifyInputs.from_flat({**_inputs(store), "distractors": _tree(store, pool)}, "certify")


def test_a_distractor_pool_is_certified_like_evidence_and_never_passes_for_the_oracle(store: Store) -> None:
    """Distractors are agent-visible through every memory: a clean pool certifies; one holding the memory's phrase,
    an answer, a harness term, or a document at an evidence document's path is a finding, since whichever of them
    reached the model would be credited as (or would be) the oracle."""
    phrase = "labels come from one table"
    params = CertifyParams(memory_phrases=(phrase,))
    clean = {"notes/elsewhere-1001-csv.md": b"# CSV export\n\nAnchors: other/export.py\n\n" + PROSE}
    report = certify_surfaces(store, _with_pool(store, clean), params)
    assert report.verdict is Verdict.CERTIFIED
    assert [s.surface for s in report.surfaces][:3] == ["source", "evidence", "distractors"]
    posing = clean | {"notes/2024-03-settings.md": b"A decision from another project.\n"}
    assert _found(certify_surfaces(store, _with_pool(store, posing), params)) == {
        ("solution-leak", "distractors", "notes/2024-03-settings.md",
         "a distractor at an evidence document's path would pass for the oracle"),
    }  # fmt: skip
    leaking = clean | {"notes/other-1002.md": b"In acme the labels\ncome from one table too.\n"}
    assert _found(certify_surfaces(store, _with_pool(store, leaking), params)) == {
        ("solution-leak", "distractors", "notes/other-1002.md", f"memory phrase {phrase!r}")
    }
    aware = clean | {"notes/other-1003.md": b"Tuned for stele-bench.\n"}
    assert ("benchmark-awareness", "distractors", "notes/other-1003.md", "stele-bench") in _found(
        certify_surfaces(store, _with_pool(store, aware), params)
    )
    answered = certify_surfaces(store, _with_pool(store, clean | {"notes/x.md": b"Automatic Update Checks\n"}), params)
    assert {(kind, surface) for kind, surface, _, _ in _found(answered)} == {("solution-leak", "distractors")}
