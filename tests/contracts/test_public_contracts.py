"""Every public contract refuses unknown fields and wrong types, naming the field."""

from __future__ import annotations

import json
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from bench.cli import main
from bench.contracts import Document
from bench.run.catalogue import CONTRACTS as REGISTRY

CONTRACTS = REGISTRY.models()


def test_registry_lists_the_foundation_contracts() -> None:
    assert {"tree-object", "action-key", "action-result", "plan"} <= set(CONTRACTS)


@pytest.mark.parametrize("name", sorted(CONTRACTS))
@settings(max_examples=25, deadline=None)
@given(field=st.text(min_size=1, max_size=12), value=st.one_of(st.integers(), st.text(), st.none()))
def test_unknown_fields_are_refused_by_name(name: str, field: str, value: object) -> None:
    model: type[BaseModel] = CONTRACTS[name]
    if field in model.model_fields:
        return
    with pytest.raises(ValidationError) as caught:
        model.model_validate({field: value})
    assert any(error["type"] == "extra_forbidden" and error["loc"] == (field,) for error in caught.value.errors())


@pytest.mark.parametrize("name", sorted(CONTRACTS))
def test_every_contract_is_frozen_strict_and_versioned(name: str) -> None:
    model = CONTRACTS[name]
    assert model.model_config.get("extra") == "forbid"
    assert model.model_config.get("frozen") is True
    assert model.model_config.get("strict") is True
    if issubclass(model, Document):
        assert {"kind", "schema_version"} <= set(model.model_fields)


def test_a_document_without_schema_version_cannot_be_declared() -> None:
    with pytest.raises(TypeError, match="schema_version"):

        class Unversioned(Document):
            kind: Literal["unversioned"] = "unversioned"


def test_wrong_type_names_the_field() -> None:
    with pytest.raises(ValidationError) as caught:
        CONTRACTS["tree-entry"].model_validate({"name": "a", "kind": "file", "digest": "x", "size": "12"})
    locations = {error["loc"] for error in caught.value.errors()}
    assert ("digest",) in locations and ("size",) in locations


def test_schema_command_prints_one_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--json", "schema", "tree-object"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["additionalProperties"] is False
    assert main(["--json", "schema", "no-such-thing"]) == 2
    captured = capsys.readouterr()
    refusal = json.loads(captured.out)["error"]
    assert (refusal["code"], refusal["exit_code"]) == ("usage", 2)
    assert "no public contract is named 'no-such-thing'" in refusal["message"] and "no-such-thing" in captured.err
