"""One environment-variable name type and one reader, used by every contract that names a variable."""

from __future__ import annotations

import ast
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import bench
from bench.contracts import environment_value
from bench.errors import ContractError
from bench.fence import FenceConfig
from bench.gateway import ForwardTerms, GatewayError
from bench.suite.forward import ForwardSettings
from bench.suite.memory_system import McpServer

PACKAGE = Path(bench.__file__).parent
HOME = PACKAGE / "contracts" / "environment.py"
LONGEST = "K" * 64  # the bound: 64 characters


def _string_constants(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def test_the_env_name_pattern_is_defined_once() -> None:
    """No module but its home spells a whole-string identifier pattern, and nothing re-declares `EnvName` or
    `_ENV_NAME` (a Python dotted-name pattern, unanchored, is another thing)."""
    spelled = [
        path.relative_to(PACKAGE).as_posix()
        for path in sorted(PACKAGE.rglob("*.py"))
        if any("^[A-Za-z_][A-Za-z0-9_]" in text for text in _string_constants(path))
    ]
    assert spelled == ["contracts/environment.py"]
    declared = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else []
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if {"EnvName", "_ENV_NAME"} & set(names):
                declared.append(path.relative_to(PACKAGE).as_posix())
    assert declared == ["contracts/environment.py"]


def _fence(name: str) -> object:
    return FenceConfig(
        base_url="https://quota.test", key_env=name, key_sha256="0" * 64, production_reserve_usd=Decimal(0)
    )


def _gateway(name: str) -> object:
    price = {"input": Decimal(1), "output": Decimal(1), "cache_write": Decimal(1), "cache_read": Decimal(1)}
    return ForwardTerms(key_env=name, prices={"m": price})  # type: ignore[dict-item]


def _forward(name: str) -> object:
    price = {"input": Decimal(1), "output": Decimal(1), "cache_write": Decimal(1), "cache_read": Decimal(1)}
    fields: dict[str, Any] = {"upstream_env": "UPSTREAM", "key_env": name, "prices": {"m": price}}
    return ForwardSettings(**fields, arm_cap_usd=Decimal(1), pair_cap_usd=Decimal(2), unfenced="no quota API here")


def _mcp(name: str) -> object:
    return McpServer(command="memory", env={name: "/opt/state"})


USERS = {"fence": _fence, "gateway": _gateway, "forward": _forward, "mcp-server": _mcp}


@pytest.mark.parametrize("user", sorted(USERS))
def test_every_user_takes_the_same_names(user: str) -> None:
    build = USERS[user]
    build(LONGEST)
    build("_PRIVATE_1")
    for bad in (LONGEST + "K", "1LEADING_DIGIT", "HAS-DASH", "sk-ant-pasted-key!", ""):
        with pytest.raises(ValidationError):
            build(bad)


def test_the_reader_refuses_an_unset_or_empty_variable_in_one_line_naming_it() -> None:
    for environ in ({}, {"PROVIDER_KEY": ""}):
        with pytest.raises(ContractError) as refused:
            environment_value("PROVIDER_KEY", "the provider key", environ=environ)
        assert "$PROVIDER_KEY" in str(refused.value) and "\n" not in str(refused.value)
        assert refused.value.field == "PROVIDER_KEY" and refused.value.exit_code == 6
    assert environment_value("PROVIDER_KEY", "the provider key", environ={"PROVIDER_KEY": "v"}) == "v"


def test_the_reader_raises_in_the_caller_s_family(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ABSENT_UPSTREAM_KEY", raising=False)
    with pytest.raises(GatewayError, match=r"\$ABSENT_UPSTREAM_KEY") as refused:
        environment_value("ABSENT_UPSTREAM_KEY", "forward mode's provider key", error=GatewayError)
    assert refused.value.exit_code == GatewayError.exit_code
    monkeypatch.setenv("ABSENT_UPSTREAM_KEY", "from-the-process")
    assert environment_value("ABSENT_UPSTREAM_KEY", "forward mode's provider key") == "from-the-process"
