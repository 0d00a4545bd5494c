"""An attachment that failed is named in the grade, so the arm ends attachment-failed instead of "not delivered".

Read from the captured real-CLI arm: its stream's init event (each MCP server and its status), its session file's
hook records (each call's success or failure) and the conversation (the instructions file the harness loaded).
"""

from __future__ import annotations

import json

from cli_captures import MEMORY, captured, conversation
from scenario import PROMPT

from bench.grading import InstalledHook, MemoryDeclaration, RunnerRecord, harness_conversation
from bench.grading.layers import attachment_failures
from bench.harness.claude_code.session_log import parse_claude_session
from tests.grading.exchanges import messages_exchange

ARM = "with-hooks"
HOOKS = MEMORY.model_copy(
    update={"hooks": (InstalledHook(event="UserPromptSubmit"), InstalledHook(event="PostToolUse", matcher="Read"))}
)


def _with_servers(stream: bytes, servers: list[dict[str, str]]) -> bytes:
    lines = [json.loads(line) for line in stream.splitlines()]
    for line in lines:
        if line.get("type") == "system" and line.get("subtype") == "init":
            line["mcp_servers"] = servers
    return b"\n".join(json.dumps(line).encode() for line in lines)


def _session(failing: str | None = None) -> bytes:
    """The captured session; with every record of hook ``failing`` made a failure record."""
    lines = []
    for raw in captured(ARM, "session").splitlines():
        line = json.loads(raw)
        attachment = line.get("attachment")
        if failing and isinstance(attachment, dict) and attachment.get("hookName") == failing:
            line["attachment"] = {"type": "hook_non_blocking_error", "hookName": failing, "hookEvent": failing,
                                  "stderr": "state.sqlite: no such table: notes", "exitCode": 1}  # fmt: skip
        lines.append(json.dumps(line).encode())
    return b"\n".join(lines)


def test_an_honest_arm_has_no_failure_and_a_hook_failing_on_every_call_is_one() -> None:
    streams = [captured(ARM, "stream"), captured(ARM, "resume.stream")]
    honest = parse_claude_session(_session(), streams)
    assert attachment_failures(honest, conversation(ARM), HOOKS) == ()
    failing = parse_claude_session(_session("UserPromptSubmit"), streams)
    (failure,) = attachment_failures(failing, conversation(ARM), HOOKS)
    assert failure == "hook UserPromptSubmit failed on every call (2): state.sqlite: no such table: notes"


def test_a_declared_mcp_server_that_failed_to_start_is_named_with_its_error() -> None:
    failed = [{"name": "memory", "status": "failed", "error": "spawn mcp-server-memory ENOENT"}]
    streams = [_with_servers(captured(ARM, "stream"), failed), captured(ARM, "resume.stream")]
    transcript = parse_claude_session(_session(), streams)
    servers = MEMORY.model_copy(update={"tool_servers": ("memory",)})
    assert attachment_failures(transcript, conversation(ARM), servers) == (
        "MCP server memory failed in step 0: spawn mcp-server-memory ENOENT",
        "MCP server memory missing in step 1",
    )
    connected = [_with_servers(s, [{"name": "memory", "status": "connected"}]) for s in streams]
    assert attachment_failures(parse_claude_session(_session(), connected), conversation(ARM), servers) == ()


def test_a_declared_instructions_file_the_harness_never_loaded_is_named() -> None:
    record = RunnerRecord(prompts=(PROMPT,), cwd="/w")
    prompt = {"role": "user", "content": [{"type": "text", "text": PROMPT}]}
    held = harness_conversation([messages_exchange(0, [prompt], {})], record)
    declared = MemoryDeclaration(phrases=("x",), static_files=("/home/dev/.claude/CLAUDE.md",))
    transcript = parse_claude_session(_session())
    assert attachment_failures(transcript, held, declared) == (
        "instructions file /home/dev/.claude/CLAUDE.md never reached the model",
    )
