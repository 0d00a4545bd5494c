"""The policy's tool vocabulary rendered as Codex's tool calls (each shape verified against the real CLI in
test_codex_real_cli.py); a call Codex cannot carry is refused before any run."""

from __future__ import annotations

import json

import pytest

from bench.errors import ContractError
from bench.harness.codex.actions import codex_call, require_renderable


def test_bash_and_read_are_shell_commands() -> None:
    bash = codex_call("Bash", {"command": "cd /workspace && python3 -m unittest -q", "description": "x"}, "c1")
    assert bash["type"] == "function_call" and bash["name"] == "exec_command" and bash["call_id"] == "c1"
    assert json.loads(bash["arguments"]) == {"cmd": "cd /workspace && python3 -m unittest -q"}
    read = codex_call("Read", {"file_path": "/workspace/it's here.py"}, "c2")
    assert json.loads(read["arguments"]) == {"cmd": "cat -- '/workspace/it'\"'\"'s here.py'"}


def test_write_and_edit_are_patches() -> None:
    write = codex_call("Write", {"file_path": "/workspace/A.md", "content": "# A\n\nb\n"}, "c3")
    assert write["type"] == "custom_tool_call" and write["name"] == "apply_patch"
    assert write["input"] == "*** Begin Patch\n*** Add File: /workspace/A.md\n+# A\n+\n+b\n*** End Patch\n"
    edit = codex_call("Edit", {"file_path": "/w/x.py", "old_string": "a = 1\n", "new_string": "a = 2\nb = 3\n"}, "c4")
    assert edit["input"] == "*** Begin Patch\n*** Update File: /w/x.py\n@@\n-a = 1\n+a = 2\n+b = 3\n*** End Patch\n"


def test_an_mcp_tool_is_called_in_its_namespace() -> None:
    call = codex_call("mcp__memory__search_nodes", {"query": "Status H"}, "c5")
    assert (call["type"], call["namespace"], call["name"]) == ("function_call", "mcp__memory", "search_nodes")
    assert json.loads(call["arguments"]) == {"query": "Status H"}


@pytest.mark.parametrize(
    ("name", "tool_input", "message"),
    [
        ("MultiEdit", {}, "no Codex counterpart"),
        ("mcp__memory", {}, "no Codex counterpart"),
        ("Edit", {"file_path": "/w/x", "old_string": "a", "new_string": "b\n"}, "whole lines"),
        ("Write", {"file_path": "/w/x"}, "string 'content'"),
    ],
)
def test_a_call_codex_cannot_carry_is_refused(name: str, tool_input: dict[str, object], message: str) -> None:
    with pytest.raises(ContractError, match=message):
        require_renderable([(name, tool_input)])
