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

from pydantic import (
    BeforeValidator,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    StringConstraints,
    model_serializer,
)

from bench.contracts import ContractModel, ImageId, PortablePath, Sha256

__all__ = [
    "PUBLIC_CONTRACTS",
    "RETRIEVE_BATCH",
    "AbsolutePath",
    "ArtifactRef",
    "DestroyRequest",
    "DestroyResponse",
    "HookEvent",
    "HookEventName",
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
    "RetrievalDeclaration",
    "RetrieveRequest",
    "RetrieveResponse",
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
# Events per retrieve call: the runner sends an arm's events in batches this size, so a reply stays small.
RETRIEVE_BATCH = 32
# Bounded as the strict reader bounds every integer: a count past 64 bits is a broken provisioner, not a count.
Count = Annotated[int, Field(ge=0, le=2**63 - 1)]


def _true_itself(value: object) -> object:
    # Literal[True] compares by equality, and 1 == True in Python: without this, {"ok": 1} would pass.
    if value is not True:
        raise ValueError(f"expected the JSON literal true, got {value!r}")
    return value


class Verb(StrEnum):
    """The verbs, passed as the argument after the provisioner's argv prefix. ``retrieve`` is called only on a
    system whose restore declared deterministic retrieval (:class:`RetrievalDeclaration`)."""

    RESTORE = "restore"
    SNAPSHOT = "snapshot"
    DESTROY = "destroy"
    RETRIEVE = "retrieve"


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
    """stdin of ``restore``: make a frozen memory state live for one run.

    ``image`` is the engine image the system's declared tools run in (its suite's image layer), sent only to a
    system that declares one: a provisioner may start its own tools there to seed the memory through them, so the
    state is written by the very build the treatment arm runs."""

    fixture: Name
    graph_arm: Name
    run_identity: RunIdentity
    artifacts: RestoreArtifacts
    probes: tuple[ProbeRequest, ...] = ()
    image: ImageId | None = None

    @model_serializer(mode="wrap")
    def _without_image(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Left out when unset: a system without a layer is sent the request it was sent before ``image`` existed."""
        dumped: dict[str, Any] = handler(self)
        if dumped.get("image") is None:
            dumped.pop("image", None)
        return dumped


class RestoreLocations(ContractModel):
    """Where the restored state lives for this run, by name: the host paths the suite's attachment mounts.

    Version 1. A suite declares mounts by location name (``attachment.mounts[].location``); the runner mounts each
    named path into the treatment container and grants the container's user read access (and write access where
    the mount is declared writable). Paths must stay valid until ``destroy``.
    """

    version: Literal[1] = 1
    paths: dict[Name, AbsolutePath] = Field(min_length=1)


class RetrievalDeclaration(ContractModel):
    """Version 1. ``deterministic: true`` promises that what the system's hooks inject is a function of the restored
    state and the hook's input alone: the ``retrieve`` verb, given the hook inputs the runner rebuilds from the
    gateway log, answers with exactly the context the hooks would inject, read from the state *as restore left it*
    (a system whose run writes its state keeps the restored copy for ``retrieve``). The runner re-derives every
    hook context of the treatment arm that way and compares it with what reached the model; a difference is a
    finding on the pair.
    """

    version: Literal[1] = 1
    deterministic: bool


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
    retrieval: RetrievalDeclaration | None = Field(
        default=None,
        description=(
            "Optional, versioned (see RetrievalDeclaration.version): whether the system's injected context is "
            "deterministic, so the runner re-derives it with the `retrieve` verb. Absent: not deterministic."
        ),
    )


class SnapshotRequest(ContractModel):
    """stdin of ``snapshot`` and the shape of ``destroy``'s stdin."""

    project: ProjectName


class DestroyRequest(ContractModel):
    """stdin of ``destroy``."""

    project: ProjectName


class MemoryState(ContractModel):
    """What the provisioner found when it re-read the live memory: whether it exists, how many items, a fingerprint.

    ``graph_nodes`` and ``graph_edges`` count what the graph arm added, apart from the evidence (whose passages are
    ``items``); a system that keeps no graph of its own leaves them out. An empty graph arm is an invalid pair.
    """

    present: bool
    items: Count
    fingerprint: Sha256
    graph_nodes: Count | None = None
    graph_edges: Count | None = None


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


class HookEventName(StrEnum):
    """The hook events whose input the gateway log holds: a prompt, and a tool call with its input."""

    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    POST_TOOL_USE = "PostToolUse"


class HookEvent(ContractModel):
    """One hook invocation as the harness gave it on the hook's stdin, rebuilt from the gateway log: the fields
    that log holds (``prompt`` for a prompt, ``tool_name`` and ``tool_input`` for a tool call) and the session's
    working directory. Session ids and transcript paths are not part of it: a deterministic retrieval needs none."""

    hook_event_name: HookEventName
    cwd: AbsolutePath
    prompt: Annotated[str, StringConstraints(max_length=1_000_000)] | None = None
    tool_name: Annotated[str, StringConstraints(min_length=1, max_length=256)] | None = None
    tool_input: dict[str, JsonValue] | None = None


class RetrieveRequest(ContractModel):
    """stdin of ``retrieve``: the hook events to answer, against the project's state as restore left it."""

    project: ProjectName
    events: tuple[HookEvent, ...] = Field(max_length=RETRIEVE_BATCH)


class RetrieveResponse(ContractModel):
    """stdout of ``retrieve``: per event, in order, the context the system's hook would inject (null: none).

    ``sources`` (optional): per event, in order, the evidence documents that context was drawn from, best first
    (empty where the hook injects nothing), in the hits' vocabulary of corpus paths. A system that names them has
    its retrieval scored against each challenge's oracle documents (recall@k, precision@k); one that does not is
    reported "not measured"."""

    contexts: tuple[Annotated[str, StringConstraints(max_length=16_000)] | None, ...]
    sources: tuple[Annotated[tuple[PortablePath, ...], Field(max_length=50)], ...] | None = None
    retrieve_seconds: Seconds


PUBLIC_CONTRACTS: tuple[type[ContractModel], ...] = (
    RestoreRequest,
    RestoreResponse,
    SnapshotRequest,
    SnapshotResponse,
    DestroyRequest,
    DestroyResponse,
    RetrieveRequest,
    RetrieveResponse,
)


def json_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema of every public message, keyed by class name."""
    return {model.__name__: model.model_json_schema() for model in PUBLIC_CONTRACTS}
