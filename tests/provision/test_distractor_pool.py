"""A fixture's distractor pool: drawn deterministically, nested by size, laid beside the evidence without ever taking
an evidence document's place, and restored by every example system identically twice, within its timeouts."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest

from bench.builder import StageContext
from bench.builder.execution import execute
from bench.errors import ContractError
from bench.memory.notes import read_corpus
from bench.packaging.markers import TextScanner
from bench.provision import Provisioner, load_fixture, provisioned
from bench.provision.code import resolve_provisioner
from bench.provision.distractors import generated_pool
from bench.provision.fixture import DistractorPool, PoolGenerator, verify_artifact
from bench.provision.messages import ArtifactRef, Verb
from bench.provision.pool import pool_documents, seed_corpus
from bench.provision.receipt import PairVerdict
from bench.run.catalogue import services
from bench.stages.distractor_pool import PoolParams, distractor_pool
from bench.store import EntryKind, Store, walk_tree
from bench.suite.suite import Suite, open_suite

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "challenges" / "example"
POOL = DistractorPool(seed=38, size=500, generator=PoolGenerator.OTHER_PROJECTS)
POOL_SHA256 = "ef06f5a62ed616fd7d8b06819552d3d8d8e53b969d1c40a2306dbb9b5c237563"


def _write(documents: list[tuple[str, bytes]], root: Path) -> Path:
    for path, data in documents:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    return root


def test_a_generated_pool_is_the_same_bytes_every_time_and_a_smaller_pool_is_its_prefix() -> None:
    large = pool_documents(POOL, 500)
    assert pool_documents(POOL, 500) == large
    assert pool_documents(POOL, 50) == large[:50]
    assert len({path for path, _ in large}) == 500  # no two documents share a path
    other = pool_documents(POOL.model_copy(update={"seed": 39}), 50)
    assert other != large[:50]
    # Pinned: a change to the generator (or a Python whose draws differ) changes every run's pool and every key
    # downstream, so it must be a deliberate one, made with a new preregistration.
    digest = hashlib.sha256(b"".join(path.encode() + b"\0" + data for path, data in large)).hexdigest()
    assert digest == POOL_SHA256
    assert [d.path for d in generated_pool(38, 3)] == [path for path, _ in large[:3]]


def test_every_prefix_of_the_pool_reads_as_a_corpus_its_links_closed(tmp_path: Path) -> None:
    """A Related line names only an earlier document, so every pool size is a corpus the memories can read."""
    for size in (1, 7, 120):
        documents = read_corpus(_write(pool_documents(POOL, size), tmp_path / str(size)))
        assert len(documents) == size
    linked = [
        line for _, data in pool_documents(POOL, 500) for line in data.decode().splitlines() if "Related:" in line
    ]
    assert len(linked) > 50  # the pool's documents link, as real notes do


def test_the_pool_carries_no_harness_term_no_answer_and_no_memory_phrase_of_the_example() -> None:
    suite = open_suite(EXAMPLE)
    answers = [phrase for loaded in suite.challenges for phrase in loaded.manifest.answer_phrases]
    scanner = TextScanner(answers, suite.fixture.memory_phrases)
    for path, data in pool_documents(POOL, 500):
        assert list(scanner.scan(data)) == [], path
    identifiers = [marker for entry in suite.manifest.challenges for marker in entry.identifiers]
    text = b"".join(data for _, data in pool_documents(POOL, 500)).decode()
    assert not [marker for marker in identifiers if marker in text]  # nor a marker of use grading credits


def test_a_corpus_pool_is_sampled_by_its_seed_and_nests_by_size() -> None:
    corpus = {f"notes/n{i:03d}.md": f"# Note {i}\n\nText {i}.\n".encode() for i in range(40)}
    pool = DistractorPool(seed=5, size=30, corpus={"path": "pool", "sha256": "0" * 64})
    drawn = pool_documents(pool, 30, corpus)
    assert pool_documents(pool, 10, corpus) == drawn[:10]
    assert [path for path, _ in drawn] != sorted(path for path, _ in drawn)  # shuffled, not the listing's order
    assert pool_documents(pool.model_copy(update={"seed": 6}), 30, corpus) != drawn
    with pytest.raises(ContractError, match="at most 30"):
        pool_documents(pool, 31, corpus)
    with pytest.raises(ContractError, match="fewer than the 30"):
        pool_documents(pool, 30, dict(list(corpus.items())[:20]))


def test_a_pool_names_exactly_one_source() -> None:
    with pytest.raises(ValueError, match="exactly one source"):
        DistractorPool(seed=1, size=1)
    with pytest.raises(ValueError, match="exactly one source"):
        DistractorPool(seed=1, size=1, generator=PoolGenerator.OTHER_PROJECTS, corpus={"path": "p", "sha256": "0" * 64})


def test_seeding_lays_the_pool_beside_the_evidence_and_refuses_a_distractor_at_an_oracle_path(tmp_path: Path) -> None:
    suite = open_suite(EXAMPLE)
    evidence = verify_artifact(suite.fixture_root, suite.fixture.evidence_corpus)
    pool = _write(pool_documents(POOL, 20), tmp_path / "pool")
    seeded = seed_corpus(evidence, pool, tmp_path / "seeded")
    documents = {p.relative_to(tmp_path / "seeded").as_posix() for p in (tmp_path / "seeded").rglob("*.md")}
    oracle = {p.relative_to(evidence.path).as_posix() for p in Path(evidence.path).rglob("*.md")}
    assert documents == oracle | {path for path, _ in pool_documents(POOL, 20)}
    assert seeded.sha256 == seed_corpus(evidence, pool, tmp_path / "again").sha256  # the same listing, byte for byte
    (pool / "adr").mkdir(exist_ok=True)
    (pool / "adr" / "0002-drop-card-holds.md").write_text("# A decision elsewhere\n\nNothing about holds.\n")
    with pytest.raises(ContractError, match="a distractor must never pass for the oracle"):
        seed_corpus(evidence, pool, tmp_path / "clash")
    (pool / "adr" / "0002-drop-card-holds.md").unlink()
    (pool / "notes" / "link.md").symlink_to(Path(evidence.path) / "adr" / "0002-drop-card-holds.md")
    with pytest.raises(ContractError, match="not a regular file"):
        seed_corpus(evidence, pool, tmp_path / "linked")


# Restore starts the system's own server in its layer image (a build of minutes): restored with the same pool, twice,
# in tests/suite/test_memory_keeper.py (slow).
SEEDED_IN_ITS_LAYER = {"memory-keeper"}


def _restore_twice(suite: Suite, corpus: ArtifactRef, home: Path) -> list[tuple[str, str, float]]:
    """Each system restored from ``corpus`` and snapshotted: (name, fingerprint, restore seconds)."""
    results = []
    for system in suite.manifest.memory_systems:
        if system.name in SEEDED_IN_ITS_LAYER:
            continue
        argv = (*resolve_provisioner(system, suite.root), "--home", str(home / system.name))
        timeouts = {Verb.RESTORE: system.timeouts.restore_seconds, Verb.SNAPSHOT: system.timeouts.snapshot_seconds}

        async def go(provisioner: Provisioner) -> tuple[str, float]:
            fixture, arm = suite.fixture, suite.manifest.fixture.graph_arm
            async with provisioned(provisioner, fixture, arm, "pool.1", corpus=corpus) as session:
                receipt = await session.snapshot()
                assert receipt.verdict is PairVerdict.VALID, receipt.assessment.reasons
                assert receipt.snapshot is not None
                return str(receipt.snapshot.state.fingerprint), session.restored.restore_seconds

        fingerprint, seconds = asyncio.run(go(Provisioner(argv, suite.fixture_root, timeouts=timeouts)))
        assert seconds < system.timeouts.restore_seconds
        results.append((system.name, fingerprint, seconds))
    return results


def test_a_500_document_pool_restores_identically_twice_in_every_example_system(tmp_path: Path) -> None:
    """Done when: digests equal across two runs, each restore (through the real adapter, the declared timeouts
    enforced) within its system's timeout, every snapshot valid with the pool beside the evidence."""
    suite = open_suite(EXAMPLE)
    assert suite.fixture.distractors is not None and suite.pool_sizes == (500,)
    evidence = verify_artifact(suite.fixture_root, suite.fixture.evidence_corpus)
    runs = []
    for run in ("one", "two"):
        pool = _write(pool_documents(suite.fixture.distractors, 500), tmp_path / run / "pool")
        corpus = seed_corpus(evidence, pool, tmp_path / run / "evidence")
        runs.append((corpus.sha256, _restore_twice(suite, corpus, tmp_path / run / "homes")))
    (first_corpus, first), (second_corpus, second) = runs
    assert first_corpus == second_corpus
    assert [(name, fingerprint) for name, fingerprint, _ in first] == [(n, f) for n, f, _ in second]
    assert load_fixture(suite.fixture_root) == suite.fixture


def test_the_distractor_pool_stage_draws_the_same_tree_in_two_stores_and_a_smaller_pool_is_its_prefix() -> None:
    """Two runs that share nothing (two stores, two executions) make the same pool tree: the digest every downstream
    key names; a rerun in one store executes nothing."""
    trees = []
    for _ in range(2):
        store = Store.in_memory()
        done = execute(StageContext(store, services()), distractor_pool, {}, PoolParams(pool=POOL, size=500))
        again = execute(StageContext(store, services()), distractor_pool, {}, PoolParams(pool=POOL, size=500))
        assert (done.executed, again.executed) == (True, False)
        tree = done.outputs["pool"]
        files = [(path, entry) for path, entry in walk_tree(store, tree) if entry.kind is not EntryKind.DIRECTORY]
        listed = {str(path): store.get_bytes(entry.digest) for path, entry in files}
        assert listed == dict(pool_documents(POOL, 500))
        trees.append(tree)
    assert trees[0] == trees[1]
    small = execute(StageContext(Store.in_memory(), services()), distractor_pool, {}, PoolParams(pool=POOL, size=50))
    assert small.outputs["pool"] != trees[0]
