"""The reference memory system's verbs, over the directory it keeps its projects in (its *home*).

Layout: ``<home>/<project>/state.sqlite`` is the memory, ``<home>/<project>/hook.py`` the hook program the agent's
container runs over it (both reported as restore locations, ``state`` and ``hook``, which the suite's attachment
mounts), and ``<home>/<project>/restore.json`` what snapshot needs besides them (the probes to run). Passage vectors
are kept between restores in a cache file outside every project (:mod:`.vector_cache`). A project's
name is salted per restore, so runs sharing a home never collide. A restore is built in a temporary directory and
renamed into place, so a failed or killed restore leaves no half-built project behind. Ingestion is synchronous, so
the reference system has no queue: both queue counts it reports are zero by construction. Its hooks read the state
only, so restore declares its retrieval deterministic, and ``retrieve`` answers each hook event with the hook
program's own code over the state restore built, naming the notes each context holds (so its retrieval is scored).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import shutil
import tempfile
import time
from pathlib import Path

from bench.contracts import PortablePath, Sha256
from bench.provision.fixture import artifact_sha256
from bench.provision.messages import (
    ArtifactRef,
    DestroyRequest,
    DestroyResponse,
    HookEventName,
    MemoryState,
    ProbeKind,
    ProbeRequest,
    RestoreLocations,
    RestoreRequest,
    RestoreResponse,
    RetrievalDeclaration,
    RetrieveRequest,
    RetrieveResponse,
    SnapshotRequest,
    SnapshotResponse,
)

from .install import hook_program
from .notes import read_corpus
from .probes import run_probes
from .recall import connect, hook_recall
from .semantic import Embedder, load_embedder, require_embedder
from .state import StateError, build_state, fingerprint, graph_counts, item_count

__all__ = ["HOOK_FILE", "STATE_FILE", "destroy", "project_dir", "restore", "retrieve", "snapshot", "state_path"]

# The hook program's event argument for each hook event it is installed for (bench.memory.install).
_HOOK_EVENTS = {HookEventName.USER_PROMPT_SUBMIT: "prompt", HookEventName.POST_TOOL_USE: "recall"}
STATE_FILE = "state.sqlite"
HOOK_FILE = "hook.py"
_RESTORE_FILE = "restore.json"


def project_dir(home: Path, project: str) -> Path:
    return home / project


def state_path(home: Path, project: str) -> Path:
    """The SQLite file to mount (read-only) into the agent's container for ``project``."""
    return project_dir(home, project) / STATE_FILE


def restore(home: Path, request: RestoreRequest, vectors: Path | None = None) -> RestoreResponse:
    """Build the project's state; ``vectors`` is the passage-vector cache (None: embed every passage afresh)."""
    started = time.monotonic()
    for name, ref in (("evidence corpus", request.artifacts.evidence_corpus), ("graph", request.artifacts.graph)):
        _check_artifact(name, ref)
    key = "\0".join((request.fixture, request.graph_arm, request.run_identity, secrets.token_hex(8)))
    project = "r" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]
    target = project_dir(home, project)
    if target.exists():
        raise StateError(f"project {project} already exists in {home}; destroy it before restoring the same run")
    home.mkdir(parents=True, exist_ok=True)
    embedder = _embedder(request.probes)
    with tempfile.TemporaryDirectory(dir=home, prefix=".restore-") as scratch:
        documents = read_corpus(Path(request.artifacts.evidence_corpus.path))
        build_state(Path(scratch) / STATE_FILE, documents, Path(request.artifacts.graph.path), embedder, vectors)
        facts = {"probes": [p.model_dump(mode="json") for p in request.probes]}
        (Path(scratch) / _RESTORE_FILE).write_text(json.dumps(facts, sort_keys=True), encoding="utf-8")
        (Path(scratch) / HOOK_FILE).write_bytes(hook_program())
        Path(scratch).rename(target)
        Path(scratch).mkdir()  # TemporaryDirectory removes its path on exit
    locations = RestoreLocations(paths={"state": str(target / STATE_FILE), "hook": str(target / HOOK_FILE)})
    return RestoreResponse(
        project=project,
        queue_before_count=0,
        restore_seconds=time.monotonic() - started,
        locations=locations,
        retrieval=RetrievalDeclaration(deterministic=True),
    )


def snapshot(home: Path, request: SnapshotRequest) -> SnapshotResponse:
    """Re-read the project's state from disk, independently of how restore built it."""
    started = time.monotonic()
    directory = project_dir(home, request.project)
    path = directory / STATE_FILE
    if not path.is_file():
        missing = MemoryState(present=False, items=0, fingerprint=Sha256.of(b""))
        return SnapshotResponse(state=missing, probes=(), queue_after_count=0, snapshot_seconds=0.0)
    facts = json.loads((directory / _RESTORE_FILE).read_text(encoding="utf-8"))
    probes = tuple(ProbeRequest.model_validate_json(json.dumps(p)) for p in facts["probes"])
    embedder = _embedder(probes)
    conn = connect(path)
    try:
        nodes, edges = graph_counts(conn)
        state = MemoryState(
            present=True,
            items=item_count(conn),
            fingerprint=Sha256(fingerprint(conn)),
            graph_nodes=nodes,
            graph_edges=edges,
        )
        answers = run_probes(conn, probes, embedder)
    finally:
        conn.close()
    return SnapshotResponse(
        state=state, probes=answers, queue_after_count=0, snapshot_seconds=time.monotonic() - started
    )


def retrieve(home: Path, request: RetrieveRequest) -> RetrieveResponse:
    """What the hooks inject for each event, by the hook program's own code over the restored state. The state is
    mounted read-only in the agent's container, so after the run it is still the state restore built."""
    started = time.monotonic()
    path = state_path(home, request.project)
    if not path.is_file():
        raise StateError(f"project {request.project} has no state at {path}; retrieve needs a restored project")
    conn = connect(path)
    try:
        recalled = [
            hook_recall(_HOOK_EVENTS[event.hook_event_name], event.model_dump(mode="json"), conn, None)
            for event in request.events
        ]
    finally:
        conn.close()
    return RetrieveResponse(
        contexts=tuple(context for _, context, _ in recalled),
        sources=tuple(tuple(PortablePath(source) for source in sources) for _, _, sources in recalled),
        retrieve_seconds=time.monotonic() - started,
    )


def destroy(home: Path, request: DestroyRequest) -> DestroyResponse:
    """Remove the project; destroying one that is already gone is success (destroy runs on every failure path)."""
    directory = project_dir(home, request.project)
    if directory.exists():
        shutil.rmtree(directory)
    return DestroyResponse(ok=True)


def _embedder(probes: tuple[ProbeRequest, ...]) -> Embedder | None:
    """The embedder: required (else refused, naming the install) when a probe is semantic, optional otherwise."""
    if any(probe.kind is ProbeKind.SEMANTIC for probe in probes):
        return require_embedder()
    return load_embedder()[0]


def _check_artifact(name: str, ref: ArtifactRef) -> None:
    actual = artifact_sha256(Path(ref.path))
    if actual != ref.sha256:
        raise StateError(f"{name} at {ref.path} has SHA-256 {actual}, the request says {ref.sha256}; refusing it")
