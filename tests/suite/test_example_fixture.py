"""The example fixture through the real adapter and the reference memory executable: every probe finds its
evidence (the semantic one too, with the offline embedding model), and nothing the agent sees names the run."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from bench.memory.notes import read_corpus
from bench.provision import PairVerdict, ProbeKind, ProbeOutcome, Provisioner, SnapshotReceipt, provisioned
from bench.suite.suite import Suite

NAMES_THE_RUN = re.compile(r"stele|bench|fixture|experiment|treatment|control arm|oracle|verifier", re.IGNORECASE)


def test_every_probe_finds_its_evidence(suite: Suite, tmp_path: Path) -> None:
    home = tmp_path / "memory-home"
    provisioner = Provisioner((sys.executable, "-m", "bench.memory", "--home", str(home)), suite.fixture_root)

    async def round_trip() -> SnapshotReceipt:
        async with provisioned(provisioner, suite.fixture, suite.manifest.fixture.graph_arm, "r1.a1") as session:
            return await session.snapshot()

    receipt = asyncio.run(round_trip())
    assert receipt.verdict is PairVerdict.VALID, receipt.assessment.reasons
    outcomes = {check.name: check.outcome for check in receipt.assessment.probes}
    assert set(outcomes.values()) == {ProbeOutcome.PASSED}, receipt.assessment.probes
    assert {probe.kind for probe in suite.fixture.probes} == set(ProbeKind)


def test_evidence_follows_the_corpus_convention_and_never_names_the_run(suite: Suite) -> None:
    documents = read_corpus(suite.fixture_root / suite.fixture.evidence_corpus.path)
    assert len(documents) >= 6 and all(doc.anchors for doc in documents)
    for path in (suite.fixture_root / "evidence").rglob("*.md"):
        assert NAMES_THE_RUN.search(path.read_text()) is None, path
    for arm in suite.fixture.graph_arms:
        assert NAMES_THE_RUN.search((suite.fixture_root / arm.graph.path).read_text()) is None


def test_each_memory_phrase_is_on_one_line_of_the_evidence(suite: Suite) -> None:
    """Hooks may deliver raw lines: a phrase broken across lines would not be found in what they deliver."""
    lines = [line for p in (suite.fixture_root / "evidence").rglob("*.md") for line in p.read_text().splitlines()]
    for phrase in suite.fixture.memory_phrases:
        assert any(phrase in line for line in lines), phrase
