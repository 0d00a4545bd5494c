"""The action cache: which stage run, on which inputs, produced which outputs.

An action's key is the digest of an :class:`ActionKey` document, so the key itself is stored and its inputs can
be walked for lineage. A result records the outputs plus facts outside the key (times, host). Several results
may be recorded for one key: a non-deterministic stage shows up as two results instead of overwriting one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import JsonValue

from ..contracts import BlobDigest, Digest, Document
from .store import Store

__all__ = [
    "ActionKey",
    "ActionResult",
    "CodeManifest",
    "producers",
    "record",
    "recorded_from",
    "results_for",
    "results_for_many",
]


class CodeManifest(Document):
    """The package source a stage runs: every module it imports from the package, with the blob of its text."""

    kind: Literal["code-manifest"] = "code-manifest"
    schema_version: Literal[1] = 1
    modules: dict[str, BlobDigest]


class ActionKey(Document):
    kind: Literal["action-key"] = "action-key"
    schema_version: Literal[1] = 1
    stage: str
    stage_version: int
    code: Digest
    params: dict[str, JsonValue]
    inputs: dict[str, Digest]


class ActionResult(Document):
    kind: Literal["action-result"] = "action-result"
    schema_version: Literal[1] = 1
    key: Digest
    outputs: dict[str, Digest]
    started: float
    ended: float
    duration_seconds: float
    host: str
    # Set when the stage judged its own result not to be kept (a paid attempt its provider failed): the result
    # stands for the run that recorded it, and a later run executes the action again (bench.stages.engine).
    retry: str | None = None


def record(store: Store, result: ActionResult) -> Digest:
    """Store ``result`` and index it by key and by each output, in one transaction."""
    with store.batch():
        digest = store.put_document(result)
        store.backend.add_result(result.key, digest, list(result.outputs.values()))
    return digest


def results_for(store: Store, key: Digest) -> list[Digest]:
    """Results recorded for ``key``, newest first."""
    return store.backend.results(key)


def results_for_many(store: Store, keys: Sequence[Digest]) -> dict[Digest, list[Digest]]:
    """:func:`results_for` of each key that has results, asked as the backend batches best."""
    return store.backend.results_many(keys)


def recorded_from(store: Store, since: float) -> list[ActionResult]:
    """Results recorded at or after ``since`` (a time.time() value), oldest first: the action log."""
    return [store.get_document(digest, ActionResult) for digest in store.backend.results_since(since)]


def producers(store: Store, output: Digest) -> list[Digest]:
    """Results that list ``output`` among their outputs."""
    return store.backend.producers(output)


PUBLIC_CONTRACTS = (ActionKey, ActionResult, CodeManifest)
