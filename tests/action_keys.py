"""Action keys of two runs compared without masking: literally, and by provenance where an observed output enters.

Two runs of one suite must make the same key for every action whose inputs are decided. An observed stage's outputs
(an agent's transcript, a verifier run's seconds) differ between two real runs, so the key of an action that reads
one, or reads what was derived from one, differs by exactly that digest. :func:`keys_by_provenance` writes every
input an action produced as what it is: "output NAME of the action whose key is K" (K itself by provenance,
recursively), and leaves every other byte of the key as recorded: stage, version, code digest, params and every
source digest (what the plan stored from the suite's files). Equal results mean the keys are derived the same way
from the same decided bytes; nothing is masked. :func:`literal_keys` is for the stages whose inputs are all decided:
their keys must be equal digest for digest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from bench.contracts import Digest
from bench.store import Store
from bench.store.actions import ActionKey, RunActions, recorded_from

__all__ = ["Action", "keys_by_provenance", "literal_keys", "store_actions"]

Action = tuple[str, dict[str, Any], dict[str, Any]]  # key digest, key document, result document (JSON)


def store_actions(store: Store) -> list[Action]:
    """Every action recorded in ``store``; an input that lists a run's actions (the bundle's ``run``, supplied by the
    pipeline) is written as that list of keys, so it too is compared by provenance."""
    found: list[Action] = []
    for result in recorded_from(store, 0.0):
        key = store.get_document(result.key, ActionKey).model_dump(mode="json")
        for name, value in key["inputs"].items():
            if _kind(store, value) == "run-actions":
                key["inputs"][name] = [str(k) for k in store.get_document(Digest(value), RunActions).keys]
        found.append((str(result.key), key, result.model_dump(mode="json")))
    return found


def _kind(store: Store, digest: str) -> object:
    try:
        return json.loads(store.get_bytes(Digest(digest))).get("kind")
    except (ValueError, AttributeError):
        return None


def literal_keys(actions: Iterable[Action]) -> dict[str, set[str]]:
    """Each stage's key digests."""
    keys: dict[str, set[str]] = {}
    for digest, key, _ in actions:
        keys.setdefault(key["stage"], set()).add(digest)
    return keys


def keys_by_provenance(actions: Iterable[Action]) -> dict[str, list[str]]:
    """Each stage's key documents, each input an action produced written by provenance; sorted."""
    listed = list(actions)
    keys = {digest: key for digest, key, _ in listed}
    produced: dict[str, list[tuple[str, str]]] = {}  # output digest -> (key digest, output name) of each producer
    for digest, _, result in listed:
        for name, output in result["outputs"].items():
            produced.setdefault(output, []).append((digest, name))
    memo: dict[str, str] = {}

    def named(digest: str) -> str:
        """The key ``digest`` by provenance, as one hash."""
        if digest not in memo:
            memo[digest] = hashlib.sha256(json.dumps(written(keys[digest]), sort_keys=True).encode()).hexdigest()
        return memo[digest]

    def written(key: Mapping[str, Any]) -> dict[str, Any]:
        inputs = {
            name: sorted(named(listed) for listed in value)
            if isinstance(value, list)
            else min(f"output {output} of {named(producer)}" for producer, output in produced[value])
            if value in produced
            else value
            for name, value in key["inputs"].items()
        }
        return {**key, "inputs": inputs}

    by_stage: dict[str, list[str]] = {}
    for _, key, _ in listed:
        by_stage.setdefault(key["stage"], []).append(json.dumps(written(key), sort_keys=True))
    return {stage: sorted(documents) for stage, documents in sorted(by_stage.items())}
