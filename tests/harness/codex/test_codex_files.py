"""The configuration files rendered from a harness-neutral attachment: exact settings, the same bytes for the same
inputs, only the declared environment for an MCP server, and nothing that names the experiment."""

from __future__ import annotations

import json
import re
import tomllib

import pytest
from pydantic import ValidationError

from bench.harness.codex.argv import KEY_VARIABLE, base_url
from bench.harness.codex.config import CodexSetup, HookCommand, HookEvent, McpServer, render_files
from bench.packaging.markers import CONDITION_TERMS, HARNESS_TERMS

SERVER = McpServer(name="memory", command="mcp-server-memory", env={"MEMORY_FILE_PATH": "/opt/knowledge/m.jsonl"})
HOOKS = (
    HookCommand(event=HookEvent.USER_PROMPT_SUBMIT, command="python3 /opt/recall/hook.py prompt"),
    HookCommand(event=HookEvent.POST_TOOL_USE, command="python3 /opt/recall/hook.py recall", matcher="Bash"),
)


def _setup(**fields: object) -> CodexSetup:
    return CodexSetup.model_validate(
        {"model": "gpt-5.5", "base_url": base_url(), "key_variable": KEY_VARIABLE, **fields}
    )


def test_the_config_pins_provider_privacy_and_servers() -> None:
    config = tomllib.loads(render_files(_setup(servers=(SERVER,)))["config.toml"].decode())
    assert config["model"] == "gpt-5.5" and config["model_provider"] == "gw"
    assert config["model_providers"]["gw"] == {
        "name": "gw",
        "base_url": "http://api:8080/v1",
        "env_key": KEY_VARIABLE,
        "wire_api": "responses",
    }
    assert config["web_search"] == "disabled"
    assert config["features"] == {"plugins": False, "memories": False}
    assert config["analytics"] == {"enabled": False}
    assert config["shell_environment_policy"] == {"inherit": "core"}
    server = config["mcp_servers"]["memory"]
    assert server["required"] is True and server["command"] == "mcp-server-memory" and server["args"] == []
    assert server["env"] == {"MEMORY_FILE_PATH": "/opt/knowledge/m.jsonl"} and "env_vars" not in server


def test_the_same_inputs_render_the_same_bytes() -> None:
    one = render_files(_setup(servers=(SERVER, SERVER.model_copy(update={"name": "b"})), hooks=HOOKS))
    two = render_files(_setup(servers=(SERVER.model_copy(update={"name": "b"}), SERVER), hooks=HOOKS))
    assert one == two


def test_hooks_and_instructions_are_written_only_when_declared() -> None:
    assert set(render_files(_setup())) == {"config.toml"}
    files = render_files(_setup(hooks=HOOKS, instructions="Use tabs.\n"))
    assert files["AGENTS.md"] == b"Use tabs.\n"
    hooks = json.loads(files["hooks.json"])["hooks"]
    assert hooks["UserPromptSubmit"] == [
        {"hooks": [{"type": "command", "command": "python3 /opt/recall/hook.py prompt", "timeout": 30}]}
    ]
    assert hooks["PostToolUse"][0]["matcher"] == "Bash"


def test_awkward_strings_survive_the_toml_writer() -> None:
    tricky = 'a "quoted" \\ back\nslash\t\u0001 é'
    server = McpServer(name="m-1", command=tricky, args=(tricky,), env={"K": tricky, "with space": "v"})
    config = tomllib.loads(render_files(_setup(servers=(server,)))["config.toml"].decode())
    assert config["mcp_servers"]["m-1"]["command"] == tricky
    assert config["mcp_servers"]["m-1"]["env"] == {"K": tricky, "with space": "v"}


@pytest.mark.parametrize("name", ["a.b", "a b", "", "x]"])
def test_a_server_name_that_is_not_a_plain_key_is_refused(name: str) -> None:
    with pytest.raises(ValidationError, match="MCP server name"):
        McpServer(name=name, command="x")


def test_nothing_the_agent_can_read_names_the_experiment() -> None:
    files = render_files(_setup(servers=(SERVER,), hooks=HOOKS, instructions="Use tabs.\n"))
    text = b"".join(files.values()).decode().lower()
    words = set(re.findall(r"[a-z]+", text))
    assert not [term for term in HARNESS_TERMS if term in text]
    assert not words & set(CONDITION_TERMS)
