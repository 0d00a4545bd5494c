"""The one place that decides "cached or run", and runs.

A stage invocation is cached exactly when the action cache holds a result for its key and every output of that
result is present. Otherwise the stage runs and its result is recorded before anything else happens, so a run
killed halfway loses no finished action.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..contracts import ContractModel, Digest
from ..errors import StageError
from ..store import Store
from ..store.actions import ActionKey, ActionResult, record, results_for
from .code import store_code_manifest
from .stage import Stage

__all__ = ["ActionOutcome", "action_key", "cached_result", "execute"]


@dataclass(frozen=True)
class ActionOutcome:
    key: Digest
    result: Digest
    outputs: dict[str, Digest]
    executed: bool


def action_key(store: Store, stage: Stage[Any], inputs: Mapping[str, Digest], params: ContractModel) -> Digest:
    """Store the key document of this invocation and return its digest."""
    key = ActionKey(
        stage=stage.name,
        stage_version=stage.version,
        code=store_code_manifest(store, stage.module),
        params=params.model_dump(mode="json"),
        inputs=dict(sorted(inputs.items())),
    )
    return store.put_document(key)


def cached_result(store: Store, key: Digest) -> tuple[Digest, ActionResult] | None:
    """The newest recorded result of ``key`` whose outputs are all present, if any."""
    for digest in results_for(store, key):
        if not store.has(digest):
            continue
        result = store.get_document(digest, ActionResult)
        if all(store.has(output) for output in result.outputs.values()):
            return digest, result
    return None


def execute(
    store: Store, stage: Stage[Any], inputs: Mapping[str, Digest], params: ContractModel | Mapping[str, Any]
) -> ActionOutcome:
    """Return the cached outcome of this invocation, or run the stage and record its result."""
    parsed = params if isinstance(params, stage.params) else stage.parse_params(dict(params))  # type: ignore[arg-type]
    for name, digest in inputs.items():
        if not store.has(digest):
            raise StageError(f"stage {stage.name!r}: input {name!r} = {digest} is not in the store")
    key = action_key(store, stage, inputs, parsed)
    cached = cached_result(store, key)
    if cached is not None:
        return ActionOutcome(key=key, result=cached[0], outputs=dict(cached[1].outputs), executed=False)
    started = time.time()
    outputs = stage.run(store, inputs, parsed)
    ended = time.time()
    for name, digest in outputs.items():
        if not store.has(digest):
            raise StageError(f"stage {stage.name!r} returned output {name!r} = {digest} without storing it")
    result = ActionResult(
        key=key,
        outputs=dict(sorted(outputs.items())),
        started=started,
        ended=ended,
        duration_seconds=round(ended - started, 6),
        host=socket.gethostname(),
    )
    return ActionOutcome(key=key, result=record(store, result), outputs=dict(result.outputs), executed=True)
