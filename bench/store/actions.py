"""The action cache: which stage run, on which inputs, produced which outputs.

An action's key is the digest of an :class:`ActionKey` document, so the key itself is stored and its inputs can
be walked for lineage. A result records the outputs plus facts outside the key (times, host). A key has one
result: the first recorded. Two workers that computed one key at once (the claims of :mod:`.claims` make that
rare) leave the first's result, and the second learns it from :func:`record`; so a bundle, its lineage and a
rerun all name the same one. A result is replaced only by naming it, when the action ran again because that
result's outputs are gone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import JsonValue, model_validator

from ..contracts import BlobDigest, Digest, Document
from ..errors import StoreError
from .store import Store

__all__ = [
    "ActionKey",
    "ActionResult",
    "CodeManifest",
    "RunActions",
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
    # stands for the run that recorded it, and a later run executes the action again (bench.builder.execution).
    retry: str | None = None


class RunActions(Document):
    """The actions one run used for an invocation's upstream, computed or found cached, by key (sorted, each once):
    what the pipeline hands a stage that publishes a run (the bundle), so that its lineage is exactly that run."""

    kind: Literal["run-actions"] = "run-actions"
    schema_version: Literal[1] = 1
    keys: tuple[Digest, ...]

    @model_validator(mode="after")
    def _sorted(self) -> RunActions:
        if list(self.keys) != sorted(set(self.keys)):
            raise ValueError("run actions are listed once each, sorted")
        return self

    @classmethod
    def of(cls, keys: Iterable[Digest]) -> RunActions:
        return cls(keys=tuple(sorted(set(keys))))


def record(store: Store, result: ActionResult, *, replacing: Digest | None = None) -> Digest:
    """Store ``result`` and make it its key's result, indexed by each output, in one transaction, unless the key
    has a result already (other than ``replacing``, whose outputs are gone). Returns the key's result after:
    ``result``'s digest, or the one another worker recorded first."""
    with store.batch():
        digest = store.put_document(result)
        store.backend.add_result(result.key, digest, list(result.outputs.values()), replacing=replacing)
    recorded = store.backend.results(result.key)
    if not recorded:
        raise StoreError(
            f"the result {digest} of action {result.key} was not recorded, and no other was",
            hint="was the store collected (gc) during the run? run it again",
        )
    return recorded[0]


def results_for(store: Store, key: Digest) -> list[Digest]:
    """The result recorded for ``key``: none or one."""
    return store.backend.results(key)


def results_for_many(store: Store, keys: Sequence[Digest]) -> dict[Digest, list[Digest]]:
    """:func:`results_for` of each key that has a result, asked as the backend batches best."""
    return store.backend.results_many(keys)


def recorded_from(store: Store, since: float) -> list[ActionResult]:
    """Results recorded at or after ``since`` (a time.time() value), oldest first: the action log."""
    return [store.get_document(digest, ActionResult) for digest in store.backend.results_since(since)]


def producers(store: Store, output: Digest) -> list[Digest]:
    """Results that list ``output`` among their outputs."""
    return store.backend.producers(output)


PUBLIC_CONTRACTS = (ActionKey, ActionResult, CodeManifest, RunActions)
