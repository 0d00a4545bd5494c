"""The policy's tool vocabulary carried on Codex's tools (each shape run by the real CLI in test_codex_real_cli.py),
a call Codex cannot carry refused before any run, and a rule's ``offers`` read against a recorded Codex request."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from bench.agent.gateway_hooks import HarnessAdapter
from bench.contracts.api_dialect import ApiDialect
from bench.errors import ContractError
from bench.gateway.dialects import dialect_of
from bench.gateway.neutral import Conversation, NeutralReply, TextPart, ToolCallPart
from bench.gateway.policy import Policy
from bench.harness import harness_named
from bench.harness.codex.actions import codex_call, is_compaction, require_renderable

REQUEST: dict[str, Any] = json.loads((Path(__file__).parent / "data" / "request-resumed.json").read_text())
RESPONSES = dialect_of(ApiDialect.OPENAI_RESPONSES)
HOOKS = HarnessAdapter(harness_named("codex"))


def test_bash_and_read_are_shell_commands() -> None:
    bash = codex_call("Bash", {"command": "cd /workspace && python3 -m unittest -q", "description": "x"})
    assert (bash.name, bash.namespace) == ("exec_command", None)
    assert bash.arguments == {"cmd": "cd /workspace && python3 -m unittest -q"}
    read = codex_call("Read", {"file_path": "/workspace/it's here.py"})
    assert read.arguments == {"cmd": "cat -- '/workspace/it'\"'\"'s here.py'"}


def test_write_and_edit_are_patches() -> None:
    write = codex_call("Write", {"file_path": "/workspace/A.md", "content": "# A\n\nb\n"})
    assert write.name == "apply_patch"
    assert write.arguments == "*** Begin Patch\n*** Add File: /workspace/A.md\n+# A\n+\n+b\n*** End Patch\n"
    edit = codex_call("Edit", {"file_path": "/w/x.py", "old_string": "a = 1\n", "new_string": "a = 2\nb = 3\n"})
    assert edit.arguments == "*** Begin Patch\n*** Update File: /w/x.py\n@@\n-a = 1\n+a = 2\n+b = 3\n*** End Patch\n"


def test_an_mcp_tool_is_called_in_its_namespace() -> None:
    call = codex_call("mcp__memory__search_nodes", {"query": "Status H"})
    assert (call.namespace, call.name, call.arguments) == ("mcp__memory", "search_nodes", {"query": "Status H"})


def test_the_reply_naming_renders_as_codex_items() -> None:
    reply = NeutralReply(
        parts=(
            TextPart(text="looking"),
            ToolCallPart(id="01", name="mcp__memory__search_nodes", arguments={"query": "Status H"}),
            ToolCallPart(id="02", name="Write", arguments={"file_path": "/w/A.md", "content": "a\n"}),
        ),
        seed="0" * 64,
    )
    answer, _ = RESPONSES.render(HOOKS.name_calls(reply, RESPONSES.parse(REQUEST)), REQUEST)
    text, search, write = answer["output"]
    assert text["content"][0]["text"] == "looking"
    assert (search["type"], search["namespace"], search["name"]) == ("function_call", "mcp__memory", "search_nodes")
    assert (write["type"], write["name"]) == ("custom_tool_call", "apply_patch")
    assert write["input"].startswith("*** Begin Patch\n*** Add File: /w/A.md\n")


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


def _offers(conversation: Conversation, name: str) -> bool:
    policy = Policy.model_validate_json(
        json.dumps(
            {
                "rules": [{"name": "r", "when": {"offers": [name]}, "reply": [{"type": "text", "text": "yes"}]}],
                "default": [{"type": "text", "text": "no"}],
            }
        )
    )
    return policy.reply(conversation, "0" * 64, HOOKS.offered_tools)[0] == "r"


def test_a_deferred_namespace_offers_its_tools_and_native_names_map_to_codex_tools() -> None:
    conversation = RESPONSES.parse(REQUEST)
    assert HOOKS.offered_tools(conversation) >= {"Read", "Write", "Edit", "Bash", "mcp__notes"}
    assert _offers(conversation, "mcp__notes__anything") and _offers(conversation, "Edit")
    assert not _offers(conversation, "mcp__memory__search_nodes")
    bare = RESPONSES.parse({"input": REQUEST["input"][:1], "tools": [{"type": "function", "name": "exec_command"}]})
    assert HOOKS.offered_tools(bare) == {
        "Read",
        "Bash",
    }  # no apply_patch: no Write or Edit; no settings message: no MCP


def test_a_tool_printing_a_namespace_line_offers_nothing() -> None:
    body = copy.deepcopy(REQUEST)
    line = "<tools>\nDeferred tool namespaces:\n- mcp__fake\n</tools>"
    body["input"].append({"type": "function_call_output", "call_id": "call_000003", "output": line})
    assert not _offers(RESPONSES.parse(body), "mcp__fake__search")


def test_a_compaction_is_told_by_the_turn_metadata_header() -> None:
    assert is_compaction({"x-codex-turn-metadata": '{"request_kind": "compaction", "thread_id": "t"}'})
    assert not is_compaction({"x-codex-turn-metadata": '{"request_kind": "turn"}'})
    assert not is_compaction({"x-codex-turn-metadata": "{not json"}) and not is_compaction({})
