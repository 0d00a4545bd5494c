"""Bringing a fixture's and a challenge's files into the store as certification inputs.

Every artifact goes through its owner's own check first: a fixture artifact through
:func:`bench.provision.fixture.verify_artifact` (inside the fixture root, SHA-256 as pinned), a challenge asset
through :func:`bench.suite.read_asset`. A missing artifact is therefore an error before certification starts.
The runner-owned files (manifests, verifier, oracle) become ``runner`` inputs so that a copy of one inside an
agent-visible surface is caught.
"""

from __future__ import annotations

from pathlib import Path

from ..builder import Ports
from ..contracts import BlobDigest, PortablePath, Ref, TreeDigest
from ..contracts.checked_files import read_bounded
from ..provision.fixture import FIXTURE_FILE, Fixture, verify_artifact
from ..store import EntryKind, FileEntry, Store, tree_from_directory, tree_from_entries
from ..suite import ChallengeManifest, read_asset
from ..suite.challenge import MANIFEST_NAME

__all__ = ["ChallengeSurfaces", "FixtureSurfaces", "challenge_inputs", "fixture_inputs"]


class FixtureSurfaces(Ports):
    """What a fixture shows an agent (evidence, graph arms) and its runner-owned manifest."""

    evidence: TreeDigest
    graph: dict[str, BlobDigest]
    runner: dict[str, BlobDigest]


class ChallengeSurfaces(Ports):
    """The challenge document and its runner-owned files."""

    challenge: Ref[ChallengeManifest]
    runner: dict[str, BlobDigest]


def fixture_inputs(store: Store, root: Path, fixture: Fixture) -> FixtureSurfaces:
    """The ``evidence`` tree, one ``graph`` blob per declared arm, and the fixture manifest as runner-owned."""
    evidence = Path(verify_artifact(root, fixture.evidence_corpus).path)
    if evidence.is_dir():
        tree = tree_from_directory(store, evidence)
    else:
        data = read_bounded(evidence, "the evidence corpus")
        tree = tree_from_entries(store, [FileEntry(PortablePath(evidence.name), EntryKind.FILE, data)])
    graph = {
        arm.name: store.put_bytes(read_bounded(Path(verify_artifact(root, arm.graph).path), "the graph"))
        for arm in fixture.graph_arms
    }
    runner = {"fixture-manifest": store.put_bytes(read_bounded(root / FIXTURE_FILE, "the fixture manifest"))}
    return FixtureSurfaces(evidence=tree, graph=graph, runner=runner)


def challenge_inputs(store: Store, directory: Path, challenge: ChallengeManifest) -> ChallengeSurfaces:
    """The ``challenge`` document, and its manifest file, verifier and oracle as runner-owned blobs."""
    runner = {
        "challenge-manifest": store.put_bytes(read_bounded(directory / MANIFEST_NAME, "the challenge manifest")),
        "verifier": store.put_bytes(read_asset(directory, challenge.verifier.asset)),
    }
    if challenge.oracle is not None:
        runner["oracle"] = store.put_bytes(read_asset(directory, challenge.oracle.asset))
    return ChallengeSurfaces(challenge=store.put_document(challenge), runner=runner)
