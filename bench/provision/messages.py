"""The provisioner protocol's wire messages: one strict JSON object each way per verb.

These are the whole integration surface for a memory system: a provisioner reads a request on stdin and writes the
matching response on stdout. Every message forbids unknown fields, so a provisioner that grows a field is refused
rather than silently half-understood. ``stele-bench schema`` exports :data:`PUBLIC_CONTRACTS` as JSON Schema so
provisioner authors validate against the same rules the adapter applies.

Hits are named in one vocabulary every memory system shares: the portable path of the evidence-corpus document a
result came from. That lets the runner compare a probe's hits with the fixture's expectations without learning any
provisioner's internal schema.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, StringConstraints

from bench.contracts import ContractModel, PortablePath, Sha256

__all__ = [
    "PUBLIC_CONTRACTS",
    "AbsolutePath",
    "ArtifactRef",
    "DestroyRequest",
    "DestroyResponse",
    "MemoryState",
    "ProbeAnswer",
    "ProbeKind",
    "ProbeRequest",
    "ProbeStatus",
    "ProjectName",
    "RestoreArtifacts",
    "RestoreLocations",
    "RestoreRequest",
    "RestoreResponse",
    "RunIdentity",
    "SnapshotRequest",
    "SnapshotResponse",
    "Verb",
    "json_schemas",
]

# A project name is written by the provisioner and may surface in paths and logs, so it is kept to a safe alphabet.
ProjectName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]
AbsolutePath = Annotated[str, StringConstraints(pattern=r"^/[^\x00]*$", max_length=4096)]
Name = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]
RunIdentity = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._:-]{1,128}$")]
Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]
# Bounded as the strict reader bounds every integer: a count past 64 bits is a broken provisioner, not a count.
Count = Annotated[int, Field(ge=0, le=2**63 - 1)]


def _true_itself(value: object) -> object:
    # Literal[True] compares by equality, and 1 == True in Python: without this, {"ok": 1} would pass.
    if value is not True:
        raise ValueError(f"expected the JSON literal true, got {value!r}")
    return value


class Verb(StrEnum):
    """The three verbs, passed as the argument after the provisioner's argv prefix."""

    RESTORE = "restore"
    SNAPSHOT = "snapshot"
    DESTROY = "destroy"


class ProbeKind(StrEnum):
    """How a probe reads memory back: full-text search, semantic similarity, or a graph walk from a file anchor."""

    FULL_TEXT = "full-text"
    SEMANTIC = "semantic"
    GRAPH = "graph"


class ProbeStatus(StrEnum):
    """What a provisioner says about one probe; whether the hits are the expected ones is the runner's judgement."""

    ANSWERED = "answered"
    UNSUPPORTED = "unsupported"


class ArtifactRef(ContractModel):
    """A fixture artifact after the adapter checked it: its resolved absolute path and its SHA-256."""

    path: AbsolutePath
    sha256: Sha256


class RestoreArtifacts(ContractModel):
    evidence_corpus: ArtifactRef
    graph: ArtifactRef


class ProbeRequest(ContractModel):
    """A named probe to run at snapshot time. Expected hits stay with the runner: the provisioner never sees them."""

    name: Name
    kind: ProbeKind
    query: Annotated[str, StringConstraints(min_length=1, max_length=2000)]
    top_k: Annotated[int, Field(ge=1, le=50)] = 5


class RestoreRequest(ContractModel):
    """stdin of ``restore``: make a frozen memory state live for one run."""

    fixture: Name
    graph_arm: Name
    run_identity: RunIdentity
    artifacts: RestoreArtifacts
    probes: tuple[ProbeRequest, ...] = ()


class RestoreLocations(ContractModel):
    """Where the restored state lives for this run, by name: the host paths the suite's attachment mounts.

    Version 1. A suite declares mounts by location name (``attachment.mounts[].location``); the runner mounts each
    named path into the treatment container and grants the container's user read access (and write access where
    the mount is declared writable). Paths must stay valid until ``destroy``.
    """

    version: Literal[1] = 1
    paths: dict[Name, AbsolutePath] = Field(min_length=1)


class RestoreResponse(ContractModel):
    """stdout of ``restore``."""

    project: ProjectName
    queue_before_count: Count
    restore_seconds: Seconds
    locations: RestoreLocations | None = Field(
        default=None,
        description=(
            "Optional, versioned (see RestoreLocations.version): per-run host paths of the restored state, by "
            "location name, for a suite whose attachment mounts restored state into the agent's container."
        ),
    )


class SnapshotRequest(ContractModel):
    """stdin of ``snapshot`` and the shape of ``destroy``'s stdin."""

    project: ProjectName


class DestroyRequest(ContractModel):
    """stdin of ``destroy``."""

    project: ProjectName


class MemoryState(ContractModel):
    """What the provisioner found when it re-read the live memory: whether it exists, how many items, a fingerprint."""

    present: bool
    items: Count
    fingerprint: Sha256


class ProbeAnswer(ContractModel):
    """One probe's result as the provisioner read it: hits are evidence-corpus document paths, best first."""

    name: Name
    kind: ProbeKind
    status: ProbeStatus
    hits: tuple[PortablePath, ...] = ()
    reason: Annotated[str, StringConstraints(max_length=2000)] | None = None


class SnapshotResponse(ContractModel):
    """stdout of ``snapshot``."""

    state: MemoryState
    probes: tuple[ProbeAnswer, ...]
    queue_after_count: Count
    snapshot_seconds: Seconds


class DestroyResponse(ContractModel):
    """stdout of ``destroy``: exactly ``{"ok": true}``."""

    ok: Annotated[Literal[True], BeforeValidator(_true_itself)]


PUBLIC_CONTRACTS: tuple[type[ContractModel], ...] = (
    RestoreRequest,
    RestoreResponse,
    SnapshotRequest,
    SnapshotResponse,
    DestroyRequest,
    DestroyResponse,
)


def json_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema of every public message, keyed by class name."""
    return {model.__name__: model.model_json_schema() for model in PUBLIC_CONTRACTS}
