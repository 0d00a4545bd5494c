"""The error tree: every class is drawn in bench/errors.py's docstring and has its own stable code."""

from __future__ import annotations

import re

import bench.errors
import bench.run.catalogue  # imports every stage module, so every error class is defined
from bench.errors import BenchError, ContractError, StoreCorrupt


def _subclasses(cls: type[BenchError]) -> list[type[BenchError]]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def test_every_error_is_drawn_and_has_its_own_code() -> None:
    classes = [BenchError, *_subclasses(BenchError)]
    drawn = set(re.findall(r"\+-- (\w+)|^    (\w+)", bench.errors.__doc__ or "", re.MULTILINE))
    names = {name for pair in drawn for name in pair if name}
    assert {cls.__name__ for cls in classes} <= names
    codes = [cls.code for cls in classes]
    assert len(codes) == len(set(codes))
    for cls in classes[1:]:  # the rule the docstring states, so a code changes only with its class's name
        stem = cls.__name__.removesuffix("Error") or cls.__name__
        assert cls.code == re.sub(r"(?<!^)(?=[A-Z])", "-", stem).lower()


def test_the_json_form_carries_code_message_exit_code_and_inputs() -> None:
    error = ContractError("the fixture breaks its contract", path="fixture.json", field="probes.0", hint="fix it")
    assert error.as_json() == {
        "code": "contract",
        "type": "ContractError",
        "message": "the fixture breaks its contract",
        "exit_code": 6,
        "path": "fixture.json",
        "field": "probes.0",
        "hint": "fix it",
    }
    assert StoreCorrupt("store/index.sqlite", "file is not a database").as_json()["exit_code"] == 3
