"""Bringing a fixture's and a challenge's files into the store as certification inputs.

Every artifact goes through its owner's own check first: a fixture artifact through
:func:`bench.provision.fixture.verify_artifact` (inside the fixture root, SHA-256 as pinned), a challenge asset
through :func:`bench.suite.read_asset`. A missing artifact is therefore an error before certification starts.
The runner-owned files (manifests, verifier, oracle) become ``runner/...`` inputs so that a copy of one inside
an agent-visible surface is caught.
"""

from __future__ import annotations

from pathlib import Path

from ..contracts import Digest, PortablePath
from ..provision.fixture import FIXTURE_FILE, Fixture, verify_artifact
from ..store import EntryKind, FileEntry, Store, tree_from_directory, tree_from_entries
from ..suite import ChallengeManifest, read_asset
from ..suite.challenge import MANIFEST_NAME
from .certify import GRAPH_PREFIX, RUNNER_PREFIX

__all__ = ["challenge_inputs", "fixture_inputs"]


def fixture_inputs(store: Store, root: Path, fixture: Fixture) -> dict[str, Digest]:
    """The ``evidence`` tree, one ``graph/<arm>`` blob per declared arm, and the fixture manifest as runner-owned."""
    evidence = Path(verify_artifact(root, fixture.evidence_corpus).path)
    if evidence.is_dir():
        tree = tree_from_directory(store, evidence)
    else:
        tree = tree_from_entries(store, [FileEntry(PortablePath(evidence.name), EntryKind.FILE, evidence.read_bytes())])
    inputs = {"evidence": tree, f"{RUNNER_PREFIX}fixture-manifest": store.put_bytes((root / FIXTURE_FILE).read_bytes())}
    for arm in fixture.graph_arms:
        graph = Path(verify_artifact(root, arm.graph).path)
        inputs[GRAPH_PREFIX + arm.name] = store.put_bytes(graph.read_bytes())
    return inputs


def challenge_inputs(store: Store, directory: Path, challenge: ChallengeManifest) -> dict[str, Digest]:
    """The ``challenge`` document, and its manifest file, verifier and oracle as runner-owned blobs."""
    inputs = {
        "challenge": store.put_document(challenge),
        f"{RUNNER_PREFIX}challenge-manifest": store.put_bytes((directory / MANIFEST_NAME).read_bytes()),
        f"{RUNNER_PREFIX}verifier": store.put_bytes(read_asset(directory, challenge.verifier.asset)),
    }
    if challenge.oracle is not None:
        inputs[f"{RUNNER_PREFIX}oracle"] = store.put_bytes(read_asset(directory, challenge.oracle.asset))
    return inputs
