"""What a plan would run, and why, as ``dvc status`` says it: each invocation up to date, stale or waiting.

An invocation is up to date exactly when the store's action cache holds a result for its key with every output
present (the rule :func:`~bench.builder.execution.cached_result` applies; nothing here decides differently). A stale
one is explained against the recorded action of its stage that differs from it least: the stage version, the
modules of its code that changed, the params that changed (with old and new values), the inputs that changed (for
a memory system's provisioner, which of its files: "provisioner reference: code changed (module ...)"),
outputs that were collected, or "never run". One whose upstream is stale waits for it.

Nothing is written: keys and code digests are computed as the engine would store them, not stored.
"""

from __future__ import annotations

import enum
import functools
import json
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..builder.code_digest import code_manifest
from ..builder.execution import cached_result, key_document
from ..contracts import BlobDigest, Digest, canonical_bytes
from ..provision.code import ProvisionerCode, code_change
from ..store import Store
from ..store.actions import ActionKey, ActionResult, CodeManifest, RunActions, results_for
from .plan import Invocation, Plan
from .runtime import Runtime

__all__ = ["Freshness", "InvocationStatus", "plan_status"]


class Freshness(enum.StrEnum):
    UP_TO_DATE = "up to date"
    STALE = "stale"
    WAITING = "waiting"


@dataclass
class InvocationStatus:
    name: str
    stage: str
    labels: dict[str, str]
    freshness: Freshness
    reasons: list[str] = field(default_factory=list)
    outputs: dict[str, Digest] = field(default_factory=dict)  # up to date: the cached result's outputs

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "stage": self.stage,
            "labels": self.labels,
            "status": self.freshness.value,
            "reasons": self.reasons,
        }


@functools.cache
def _blob(name: str, text: bytes) -> BlobDigest:
    """A module's source digest, hashed once per process: the stages' closures share most of their modules."""
    return BlobDigest.of(text)


def _code(module: str) -> tuple[Digest, dict[str, BlobDigest]]:
    modules = {name: _blob(name, text) for name, text in code_manifest(module).items()}
    return Digest.of(canonical_bytes(CodeManifest(modules=modules))), modules


def _recorded_keys(store: Store) -> dict[str, list[ActionKey]]:
    """Every recorded action key by stage, newest first."""
    found: dict[str, list[ActionKey]] = defaultdict(list)
    seen: set[Digest] = set()
    for digest in reversed(store.backend.results_since(0.0)):
        key_digest = store.get_document(digest, ActionResult).key
        if key_digest not in seen:
            seen.add(key_digest)
            key = store.get_document(key_digest, ActionKey)
            found[key.stage].append(key)
    return found


def _differences(store: Store, old: ActionKey, new: ActionKey, modules: Mapping[str, BlobDigest]) -> list[str]:
    said: list[str] = []
    if old.stage_version != new.stage_version:
        said.append(f"stage version {old.stage_version} -> {new.stage_version}")
    if old.code != new.code:
        before = store.get_document(old.code, CodeManifest).modules if store.has(old.code) else {}
        changed = sorted(name for name in modules.keys() | before.keys() if modules.get(name) != before.get(name))
        said.append(f"code changed: {', '.join(changed) or 'its module list'}")
    for name in sorted(old.params.keys() | new.params.keys()):
        if old.params.get(name) != new.params.get(name):
            said.append(f"param {name}: {_short(old.params.get(name))} -> {_short(new.params.get(name))}")
    for name in sorted(old.inputs.keys() | new.inputs.keys()):
        if old.inputs.get(name) != new.inputs.get(name):
            said.append(_input_change(store, name, old.inputs.get(name), new.inputs.get(name)))
    return said


def _input_change(store: Store, name: str, before: Digest | None, after: Digest | None) -> str:
    """What changed in input ``name``; for a provisioner's code, which of its parts."""
    if before is not None and after is not None and _is_code(store, before) and _is_code(store, after):
        return code_change(store.get_document(before, ProvisionerCode), store.get_document(after, ProvisionerCode))
    return f"input {name} changed"


def _is_code(store: Store, digest: Digest) -> bool:
    if not store.has(digest) or not store.is_document(digest):
        return False
    return bool(json.loads(store.get_bytes(digest)).get("kind") == "provisioner-code")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _explain(
    store: Store, key: ActionKey, key_digest: Digest, recorded: list[ActionKey], modules: Mapping[str, BlobDigest]
) -> list[str]:
    results = results_for(store, key_digest)
    if results:
        retry = store.get_document(results[0], ActionResult).retry
        missing = "its recorded outputs are no longer in the store (collected by gc?)"
        return [f"to be run again: {retry}" if retry else missing]
    if not recorded:
        return ["never run"]
    closest = min(recorded, key=lambda old: len(_differences(store, old, key, modules)))
    return _differences(store, closest, key, modules) or ["never run with these exact inputs"]


def plan_status(plan: Plan, runtime: Runtime) -> list[InvocationStatus]:
    store = runtime.open_store()
    recorded = functools.cache(lambda: _recorded_keys(store))  # read only to explain a stale one: the store's history
    outputs: dict[str, dict[str, Digest]] = {}
    keys: dict[str, Digest] = {}  # each up-to-date invocation's action key, for those that take the run's actions
    statuses: list[InvocationStatus] = []
    by_name: dict[str, InvocationStatus] = {}
    code_of = functools.cache(_code)  # a stage's sources read once per answer, not once per invocation of it
    for invocation in plan.invocations:
        ancestors = plan.ancestors(invocation.name) if invocation.run_actions else []
        status = _status(store, runtime, invocation, outputs, by_name, recorded, keys, ancestors, code_of)
        statuses.append(status)
        by_name[invocation.name] = status
    return statuses


def _status(
    store: Store,
    runtime: Runtime,
    invocation: Invocation,
    outputs: dict[str, dict[str, Digest]],
    by_name: Mapping[str, InvocationStatus],
    recorded: Callable[[], Mapping[str, list[ActionKey]]],
    keys: dict[str, Digest],
    ancestors: list[str],
    code_of: Callable[[str], tuple[Digest, dict[str, BlobDigest]]],
) -> InvocationStatus:
    status = InvocationStatus(invocation.name, invocation.stage, dict(invocation.labels), Freshness.WAITING)
    blocked = sorted(name for name in invocation.upstream if name not in outputs)
    if blocked:
        first = by_name[blocked[0]]
        status.reasons = [f"after {first.name}, which is {first.freshness.value}"]
        return status
    inputs = {name: outputs[link.invocation][link.output] for name, link in invocation.inputs.items()}
    inputs.update(invocation.sources)
    if invocation.run_actions is not None:
        # Every ancestor is up to date here (this one's upstream is), so each has its key.
        inputs[invocation.run_actions] = Digest.of(canonical_bytes(RunActions.of(keys[name] for name in ancestors)))
    stage = runtime.catalogue.get(invocation.stage)
    code, modules = code_of(stage.module)
    key = key_document(stage, code, stage.parse_inputs(inputs).flat(), stage.parse_params(invocation.params))
    key_digest = Digest.of(canonical_bytes(key))
    cached = cached_result(store, key_digest)
    if cached is not None:
        outputs[invocation.name] = status.outputs = dict(cached[1].outputs)
        keys[invocation.name] = key_digest
        status.freshness = Freshness.UP_TO_DATE
        return status
    status.freshness = Freshness.STALE
    status.reasons = _explain(store, key, key_digest, list(recorded().get(stage.name, [])), modules)
    return status
