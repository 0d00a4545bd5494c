"""The one place that decides "cached or run", and runs.

A stage invocation is cached exactly when the action cache holds a result for its key and every output of that
result is present, and that result is not one its stage marked for retry (``Stage.retry``: recorded and used by
the run that made it, executed again by the next). Otherwise the worker claims the key (:mod:`bench.store.claims`),
so however many workers ask for one key at once, on one machine or a cluster, one computes it and the others wait
for its result; the stage runs and its result is recorded before anything else happens, so a run killed halfway
loses no finished action. A key has one result: a result whose outputs are gone, or that its stage marked for
retry, is replaced by naming it, and a worker that finds the key recorded by another (one judged dead while it was
not) takes that result, so every reader sees one. What a stage returns is checked against its declaration: every
output is stored, and a tree or document output is the kind of object its port says.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..contracts import ContractModel, Digest, Ref, TreeDigest, canonical_bytes
from ..errors import StageError
from ..store import Store
from ..store.actions import ActionKey, ActionResult, record, results_for_many
from ..store.claims import claim_key
from .code_digest import store_code_manifest
from .context import StageContext
from .stage import Ports, Stage, keyed_params

__all__ = ["ActionOutcome", "action_key", "cached_result", "cached_results", "execute", "key_document"]

AnyStage = Stage[Any, Any, Any]


@dataclass(frozen=True)
class ActionOutcome:
    key: Digest
    result: Digest
    outputs: dict[str, Digest]
    executed: bool


def key_document(stage: AnyStage, code: Digest, inputs: Mapping[str, Digest], params: ContractModel) -> ActionKey:
    """The key document of an invocation of ``stage`` whose code digest is ``code``."""
    return ActionKey(
        stage=stage.name,
        stage_version=stage.version,
        code=code,
        params=keyed_params(params),
        inputs=dict(sorted(inputs.items())),
    )


def action_key(store: Store, stage: AnyStage, inputs: Mapping[str, Digest], params: ContractModel) -> Digest:
    """Store the key document of this invocation and return its digest."""
    return store.put_document(key_document(stage, store_code_manifest(store, stage.module), inputs, params))


def cached_result(store: Store, key: Digest) -> tuple[Digest, ActionResult] | None:
    """The recorded result of ``key`` if all its outputs are present."""
    return cached_results(store, [key]).get(key)


def cached_results(store: Store, keys: Sequence[Digest]) -> dict[Digest, tuple[Digest, ActionResult]]:
    """:func:`cached_result` of every key that has one, asked in batches: one query for the results of all keys,
    one for which results are stored, one read of their documents and one for their outputs."""
    recorded = {key: found[0] for key, found in results_for_many(store, keys).items()}
    results = list(dict.fromkeys(recorded.values()))
    stored = store.has_many(results)
    readable = [result for result in results if result in stored]
    documents = dict(zip(readable, store.get_documents(readable, ActionResult), strict=True))
    present = store.has_many([output for document in documents.values() for output in document.outputs.values()])
    found: dict[Digest, tuple[Digest, ActionResult]] = {}
    for key, result in recorded.items():
        document = documents.get(result)
        if document is None or document.retry is not None:
            continue  # a result its stage marked for retry is no hit: the next run executes the action again
        if all(output in present for output in document.outputs.values()):
            found[key] = (result, document)
    return found


def execute(
    context: StageContext,
    stage: AnyStage,
    inputs: Ports | Mapping[str, Digest],
    params: ContractModel | Mapping[str, Any],
) -> ActionOutcome:
    """Return the cached outcome of this invocation, or run the stage and record its result."""
    store = context.store
    parsed = params if isinstance(params, ContractModel) else stage.parse_params(dict(params))
    if not isinstance(parsed, stage.params):
        raise StageError(f"stage {stage.name!r} takes {stage.params.__name__} params, not {type(parsed).__name__}")
    typed = inputs if isinstance(inputs, Ports) else stage.parse_inputs(dict(inputs))
    if not isinstance(typed, stage.inputs):
        raise StageError(f"stage {stage.name!r} takes {stage.inputs.__name__} inputs, not {type(typed).__name__}")
    flat = typed.flat()
    for name, digest in flat.items():
        if not store.has(digest):
            raise StageError(f"stage {stage.name!r}: input {name!r} = {digest} is not in the store")
    key = action_key(store, stage, flat, parsed)
    cached = cached_result(store, key)
    if cached is None:
        with claim_key(store, key, lambda: cached_result(store, key), f"{stage.name} {key.hex[:12]}") as found:
            if found is None:
                return _run(context, stage, typed, parsed, key)
            cached = found
    return ActionOutcome(key=key, result=cached[0], outputs=dict(cached[1].outputs), executed=False)


def _run(context: StageContext, stage: AnyStage, typed: Ports, params: ContractModel, key: Digest) -> ActionOutcome:
    """Run the claimed invocation and record its result, replacing the key's result whose outputs are gone. The
    outcome is the key's result, another worker's when it recorded the key first (then not executed here)."""
    store = context.store
    replacing = next(iter(results_for_many(store, [key]).get(key, [])), None)
    started = time.time()
    produced = stage.run(context, typed, params)
    ended = time.time()
    if not isinstance(produced, stage.outputs):
        raise StageError(f"stage {stage.name!r} returned {type(produced).__name__}, not {stage.outputs.__name__}")
    outputs = produced.flat()
    _check_outputs(store, stage, outputs)
    result = ActionResult(
        key=key,
        outputs=dict(sorted(outputs.items())),
        started=started,
        ended=ended,
        duration_seconds=round(ended - started, 6),
        host=socket.gethostname(),
        retry=None if stage.retry is None else stage.retry(store, produced),
    )
    recorded = record(store, result, replacing=replacing)
    if recorded != Digest.of(canonical_bytes(result)):
        outputs = store.get_document(recorded, ActionResult).outputs
        return ActionOutcome(key=key, result=recorded, outputs=dict(outputs), executed=False)
    return ActionOutcome(key=key, result=recorded, outputs=dict(result.outputs), executed=True)


def _check_outputs(store: Store, stage: AnyStage, outputs: Mapping[str, Digest]) -> None:
    """Every output is stored, and a tree or document output holds the kind its port declares."""
    ports = stage.outputs.ports()
    for name, digest in outputs.items():
        if not store.has(digest):
            raise StageError(f"stage {stage.name!r} returned output {name!r} = {digest} without storing it")
        kind = ports[name.split("/", 1)[0]].kind
        expected = "tree" if issubclass(kind, TreeDigest) else _document_kind(kind)
        if expected is None:
            continue
        actual = _stored_kind(store, digest)
        if actual != expected:
            raise StageError(
                f"stage {stage.name!r} output {name!r} must be a {expected!r} document, but {digest} is "
                f"{repr(actual) + ' document' if actual else 'raw bytes'}"
            )


def _document_kind(kind: type[Digest]) -> str | None:
    if issubclass(kind, Ref) and kind.document is not None:
        field = kind.document.model_fields.get("kind")
        return str(field.default) if field is not None else None
    return None


def _stored_kind(store: Store, digest: Digest) -> str | None:
    if not store.is_document(digest):
        return None
    kind = json.loads(store.get_bytes(digest)).get("kind")
    return kind if isinstance(kind, str) else None
