"""The exported JSON Schemas accept the seed's example messages and reject unknown fields (checked with jsonschema)."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError

from bench.contracts.model import ContractModel
from bench.provision import PUBLIC_CONTRACTS, json_schemas
from bench.provision.fixture import PUBLIC_CONTRACTS as FIXTURE_CONTRACTS
from bench.provision.receipt import PUBLIC_CONTRACTS as RECEIPT_CONTRACTS

SHA = "7aba6b60" + "0" * 56

# The seed's three verbs and retrieve, one example each way, with the fields they name.
EXAMPLES: dict[str, dict[str, Any]] = {
    "RestoreRequest": {
        "fixture": "settings-evidence",
        "graph_arm": "backfilled",
        "run_identity": "settings-label-roundtrip.attempt-1",
        "artifacts": {
            "evidence_corpus": {"path": "/srv/fixtures/settings/evidence", "sha256": SHA},
            "graph": {"path": "/srv/fixtures/settings/graph.json", "sha256": SHA},
        },
    },
    "RestoreResponse": {
        "project": "r3f9a",
        "queue_before_count": 0,
        "restore_seconds": 2.5,
        "locations": {"version": 1, "paths": {"state": "/srv/mem/r3f9a/state.sqlite"}},
        "retrieval": {"version": 1, "deterministic": True},
    },
    "SnapshotRequest": {"project": "r3f9a"},
    "SnapshotResponse": {
        "state": {"present": True, "items": 42, "fingerprint": SHA},
        "probes": [
            {"name": "label-history", "kind": "full-text", "status": "answered", "hits": ["adr/0004-labels.md"]},
            {"name": "update-checks", "kind": "semantic", "status": "unsupported", "reason": "no model offline"},
            {"name": "settings-anchor", "kind": "graph", "status": "answered", "hits": []},
        ],
        "queue_after_count": 0,
        "snapshot_seconds": 0.4,
    },
    "DestroyRequest": {"project": "r3f9a"},
    "DestroyResponse": {"ok": True},
    "RetrieveRequest": {
        "project": "r3f9a",
        "events": [
            {"hook_event_name": "UserPromptSubmit", "cwd": "/workspace", "prompt": "Why are H rows dropped?"},
            {
                "hook_event_name": "PostToolUse",
                "cwd": "/workspace",
                "tool_name": "Read",
                "tool_input": {"file_path": "/workspace/src/importer.py", "limit": 40},
            },
        ],
    },
    "RetrieveResponse": {"contexts": ["Project notes: ADR 2 drops card holds.", None], "retrieve_seconds": 0.02},
}
# A tool's input is the tool's own JSON object, passed on as the harness gave it: any field is allowed there.
FREE_FORM = "tool_input"

MODELS: dict[str, type[ContractModel]] = {m.__name__: m for m in PUBLIC_CONTRACTS}


def _validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json_schemas()[name]
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_every_public_message_has_an_example() -> None:
    assert set(MODELS) == set(EXAMPLES) == set(json_schemas())


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_schema_and_model_accept_the_seed_example(name: str) -> None:
    _validator(name).validate(EXAMPLES[name])
    MODELS[name].model_validate_json(json.dumps(EXAMPLES[name]))


def _paths_to_objects(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every location in ``value`` holding a JSON object, the top included."""
    found: list[tuple[str | int, ...]] = []
    if isinstance(value, dict):
        found.append(path)
        for key, child in value.items():
            found.extend(_paths_to_objects(child, (*path, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.extend(_paths_to_objects(child, (*path, index)))
    return found


@pytest.mark.parametrize(
    ("name", "where"),
    [
        (name, where)
        for name, example in sorted(EXAMPLES.items())
        for where in _paths_to_objects(example)
        if FREE_FORM not in where
    ],
)
def test_unknown_field_anywhere_is_rejected_by_schema_and_model(name: str, where: tuple[str | int, ...]) -> None:
    message = copy.deepcopy(EXAMPLES[name])
    target = message
    for step in where:
        target = target[step]
    target["extra_field"] = 1
    with pytest.raises(jsonschema.ValidationError, match="extra_field"):
        _validator(name).validate(message)
    with pytest.raises(ValidationError, match="extra_field"):
        MODELS[name].model_validate_json(json.dumps(message))


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("DestroyResponse", {"ok": False}),
        ("RestoreResponse", {"queue_before_count": -1}),
        ("RestoreResponse", {"project": "../escape"}),
        ("RestoreRequest", {"run_identity": "has space"}),
        ("SnapshotRequest", {"project": ""}),
        ("RestoreResponse", {"retrieval": {"version": 2, "deterministic": True}}),
        ("RestoreResponse", {"retrieval": {"version": 1}}),
        ("RetrieveRequest", {"events": [{"hook_event_name": "SessionStart", "cwd": "/workspace"}]}),
        ("RetrieveRequest", {"events": [{"hook_event_name": "UserPromptSubmit", "cwd": "workspace"}]}),
        ("RetrieveRequest", {"events": [{"hook_event_name": "UserPromptSubmit", "cwd": "/w"}] * 33}),
        ("RetrieveResponse", {"contexts": ["x" * 16_001]}),
        ("RetrieveResponse", {"retrieve_seconds": -1}),
    ],
)
def test_schema_and_model_reject_bad_values(name: str, change: dict[str, Any]) -> None:
    message = {**EXAMPLES[name], **change}
    with pytest.raises(jsonschema.ValidationError):
        _validator(name).validate(message)
    with pytest.raises(ValidationError):
        MODELS[name].model_validate_json(json.dumps(message))


def test_a_tool_input_is_passed_on_whole() -> None:
    message = copy.deepcopy(EXAMPLES["RetrieveRequest"])
    message["events"][1]["tool_input"]["edits"] = [{"old_string": "a", "new_string": "b"}]
    _validator("RetrieveRequest").validate(message)
    parsed = MODELS["RetrieveRequest"].model_validate_json(json.dumps(message))
    assert parsed.model_dump(mode="json", exclude_none=True) == message


def test_probe_hits_must_be_portable_paths() -> None:
    message = copy.deepcopy(EXAMPLES["SnapshotResponse"])
    message["probes"][0]["hits"] = ["/etc/passwd"]
    with pytest.raises(jsonschema.ValidationError):
        _validator("SnapshotResponse").validate(message)


def test_fixture_and_receipt_export_schemas() -> None:
    for model in (*FIXTURE_CONTRACTS, *RECEIPT_CONTRACTS):
        schema = model.model_json_schema()
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["additionalProperties"] is False
