"""The Codex files rendered from a harness-neutral attachment: exact settings, sealed commands, the same bytes for
the same request, and nothing that names the experiment."""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

from bench.harness import AttachmentRequest, HookEvent, HookSpec, McpServerSpec, harness_named
from bench.harness.codex.argv import KEY_VARIABLE
from bench.packaging.markers import CONDITION_TERMS, HARNESS_TERMS
from bench.sandbox.layout import BASE_ENV

CODEX = harness_named("codex")
SERVER = McpServerSpec(name="memory", command="mcp-server-memory", env={"MEMORY_FILE_PATH": "/opt/knowledge/m.jsonl"})
HOOKS = (
    HookSpec(event=HookEvent.USER_PROMPT_SUBMIT, command="python3 /opt/recall/hook.py prompt", timeout_seconds=30),
    HookSpec(event=HookEvent.POST_TOOL_USE, command="python3 /opt/recall/hook.py recall", matcher="Bash"),
)


def _files(**channels: Any) -> dict[str, bytes]:
    request = AttachmentRequest(base_env=dict(BASE_ENV), base_url="http://api:8080", **channels)
    return {str(file.target): file.content for file in CODEX.render(request).files}


def test_the_config_pins_provider_privacy_and_servers() -> None:
    config = tomllib.loads(_files(mcp_servers=(SERVER,))[".codex/config.toml"].decode())
    assert config["model_provider"] == "gw" and config["web_search"] == "disabled"
    assert config["model_providers"]["gw"] == {
        "name": "gw",
        "base_url": "http://api:8080/v1",
        "env_key": KEY_VARIABLE,
        "wire_api": "responses",
    }
    assert config["features"] == {"plugins": False, "memories": False}
    assert config["analytics"] == {"enabled": False}
    assert config["shell_environment_policy"] == {"inherit": "core"}
    server = config["mcp_servers"]["memory"]
    assert server["required"] is True and server["command"] == "env" and "env" not in server
    assert server["args"][0] == "-i" and server["args"][-1] == "mcp-server-memory"  # sealed: only what it names
    assert "MEMORY_FILE_PATH=/opt/knowledge/m.jsonl" in server["args"] and f"HOME={BASE_ENV['HOME']}" in server["args"]


def test_hooks_are_sealed_in_the_hooks_file() -> None:
    hooks = json.loads(_files(hooks=HOOKS)[".codex/hooks.json"])["hooks"]
    (prompt,) = hooks["UserPromptSubmit"]
    assert prompt["hooks"][0]["timeout"] == 30 and "matcher" not in prompt
    assert prompt["hooks"][0]["command"].startswith("env -i ") and "hook.py prompt" in prompt["hooks"][0]["command"]
    assert hooks["PostToolUse"][0]["matcher"] == "Bash"


def test_the_same_request_renders_the_same_bytes_and_every_arm_the_same_files() -> None:
    other = SERVER.model_copy(update={"name": "b"})
    assert _files(mcp_servers=(SERVER, other), hooks=HOOKS) == _files(mcp_servers=(other, SERVER), hooks=HOOKS)
    control = _files()
    assert set(control) == {
        ".codex/config.toml",
        ".codex/hooks.json",
        ".codex/AGENTS.md",
        ".codex/AGENTS.override.md",
        ".codex/.env",
        ".agents/skills",
    }
    assert control[".codex/AGENTS.override.md"] == control[".codex/.env"] == b""
    assert json.loads(control[".codex/hooks.json"]) == {"hooks": {}} and control[".codex/AGENTS.md"] == b""


def test_awkward_strings_survive_the_toml_writer() -> None:
    tricky = 'a "quoted" \\ back\nslash\t\u0001 é'
    server = McpServerSpec(name="m-1", command=tricky, args=(tricky,), env={"K": tricky})
    config = tomllib.loads(_files(mcp_servers=(server,))[".codex/config.toml"].decode())
    assert (
        config["mcp_servers"]["m-1"]["args"][-2:] == [tricky, tricky]
        and f"K={tricky}" in config["mcp_servers"]["m-1"]["args"]
    )


def test_nothing_the_agent_can_read_names_the_experiment() -> None:
    text = b"".join(_files(mcp_servers=(SERVER,), hooks=HOOKS, instructions=b"Use tabs.\n").values()).decode().lower()
    assert not [term for term in HARNESS_TERMS if term in text]
    assert not set(re.findall(r"[a-z]+", text)) & set(CONDITION_TERMS)


def test_the_loaded_instructions_path_is_the_container_home_s() -> None:
    from bench.harness.codex.injection import CONTAINER_HOME
    from bench.sandbox.layout import USER_HOME

    assert str(CONTAINER_HOME) == USER_HOME  # the wrapper names no path: the injection format supplies it
