"""Shared pieces for the example suite's tests: the packaged project tree and a conversation driver for policies.

The driver plays the part of the agent harness around a policy, in process: it sends requests shaped as Claude Code
sends them (hook context as ``<system-reminder>`` text in user messages, tool results in the next user message, the
earlier conversation on resume) and carries out Read, Write and Edit on a real directory with Claude Code's rules
(Edit and overwriting Write need an earlier Read; Edit needs exactly one match). The memory side is the reference
memory's own recall code over a state built from the fixture, so what a policy sees is what the hooks would deliver;
the static baseline's notes go where the CLI loads a user-level CLAUDE.md. The real CLI runs the same policies in
``test_example_real_cli.py``.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.agent.harness_files import container_path
from bench.gateway import Policy
from bench.gateway.dialects.anthropic import AnthropicMessages
from bench.harness.claude_code.cli import USER_MEMORY_PATH as USER_MEMORY
from bench.memory.notes import read_corpus
from bench.memory.recall import connect, file_context, prompt_context
from bench.memory.state import build_state
from bench.packaging import materialize, open_source, redact_tree
from bench.store import Store, export_tree
from bench.suite.suite import Suite, open_suite

__all__ = ["EXAMPLE", "Conversation", "build_memory", "drive", "example_suite", "export_project", "run_script"]

EXAMPLE = Path(__file__).resolve().parents[2] / "challenges" / "example"
MAX_REQUESTS = 12

MESSAGES = AnthropicMessages()


def example_suite() -> Suite:
    return open_suite(EXAMPLE)


def export_project(suite: Suite, store: Store, dest: Path) -> tuple[list[str], Path]:
    """The pinned commit's tree, redacted as every arm gets it, written to ``dest``; returns the removed paths."""
    with open_source(str(suite.bundle)) as source:
        receipt = materialize(store, source, suite.manifest.project.commit)
    redaction = redact_tree(store, receipt.tree, suite.fixture.redact_paths)
    export_tree(store, redaction.redacted, dest)
    return [str(entry.path) for entry in redaction.removed], dest


def build_memory(suite: Suite, path: Path) -> Path:
    """The reference memory's state for the suite's graph arm, as restore builds it (without vectors)."""
    arm = suite.fixture.graph_arm(suite.manifest.fixture.graph_arm)
    evidence = suite.fixture_root / suite.fixture.evidence_corpus.path
    build_state(path, read_corpus(evidence), suite.fixture_root / arm.graph.path, None)
    return path


def run_script(script: Path, workspace: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(script)], cwd=workspace, capture_output=True, text=True, timeout=120, check=False
    )


def _reminder(event: str, context: str) -> dict[str, str]:
    return {
        "type": "text",
        "text": f"<system-reminder>\n{event} hook additional context: {context}\n</system-reminder>\n",
    }


def _instructions(notes: str) -> dict[str, str]:
    """A user-level CLAUDE.md as Claude Code 2.1.332 places it: a reminder block of the first user message."""
    return {
        "type": "text",
        "text": "<system-reminder>\nCodebase and user instructions are shown below.\n\n"
        f"Contents of {container_path(USER_MEMORY)} (user's private global instructions for all projects):\n\n{notes}\n"
        "</system-reminder>",
    }


@dataclass
class Conversation:
    """One session against one workspace; ``memory`` is the state the hooks read, or None for no hooks; ``notes``
    a user-level CLAUDE.md the harness loads into the first message, or None for none."""

    policy: Policy
    workspace: Path
    memory: sqlite3.Connection | None
    notes: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    read: set[Path] = field(default_factory=set)

    def prompt(self, text: str) -> None:
        """Send one user prompt and run tool calls until the policy ends its turn."""
        content: list[dict[str, Any]] = [_instructions(self.notes)] if self.notes and not self.messages else []
        context = prompt_context(self.memory, text) if self.memory is not None else None
        if context:
            content.append(_reminder("UserPromptSubmit", context))
        self.messages.append({"role": "user", "content": [*content, {"type": "text", "text": text}]})
        self.read.clear()  # a resumed session is conservatively assumed to forget what it read
        while True:
            if len(self.rules) >= MAX_REQUESTS:
                raise AssertionError(f"the policy did not end its turn within {MAX_REQUESTS} requests: {self.rules}")
            body = {"model": "claude-sonnet-4-5", "system": [{"type": "text", "text": "You are an agent."}]}
            rule, message, _ = MESSAGES.answer(self.policy, {**body, "messages": self.messages})
            self.rules.append(rule)
            self.messages.append({"role": "assistant", "content": message["content"]})
            if message["stop_reason"] == "end_turn":
                return
            self.messages.append({"role": "user", "content": self._run_tools(message["content"])})

    def _run_tools(self, blocks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []
        reminders: list[dict[str, str]] = []
        for block in blocks:
            if block["type"] != "tool_use":
                continue
            output, ok = self._tool(block["name"], block["input"])
            results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output, "is_error": not ok})
            if "file_path" not in block["input"]:
                continue
            path = Path(block["input"]["file_path"])
            if ok and self.memory is not None and path.is_relative_to(self.workspace):
                context = file_context(self.memory, path.relative_to(self.workspace).as_posix())
                if context:
                    reminders.append(_reminder(f"PostToolUse:{block['name']}", context))
        return results + reminders

    def _tool(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        if name == "Bash":
            ran = subprocess.run(
                ["bash", "-c", arguments["command"]], cwd=self.workspace, capture_output=True, text=True, timeout=120
            )
            return (ran.stdout + ran.stderr).strip(), ran.returncode == 0
        path = Path(arguments["file_path"])
        if not path.is_relative_to(self.workspace):
            return f"{path} is outside the workspace", False
        if name == "Read":
            if not path.is_file():
                return f"File does not exist: {path}", False
            self.read.add(path)
            lines = path.read_text(encoding="utf-8").splitlines()
            return "\n".join(f"{number:6}\t{line}" for number, line in enumerate(lines, 1)), True
        if name == "Write":
            existed = path.exists()
            if existed and path not in self.read:
                return "File has not been read yet. Read it first before writing to it.", False
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(arguments["content"], encoding="utf-8")
            self.read.add(path)
            return (
                f"The file {path} has been updated successfully."
                if existed
                else f"File created successfully at: {path}"
            ), True
        if name == "Edit":
            if path not in self.read:
                return "File has not been read yet. Read it first before writing to it.", False
            text = path.read_text(encoding="utf-8")
            if text.count(arguments["old_string"]) != 1:
                return f"old_string occurs {text.count(arguments['old_string'])} times in {path}", False
            path.write_text(text.replace(arguments["old_string"], arguments["new_string"]), encoding="utf-8")
            return f"The file {path} has been updated successfully.", True
        return f"unknown tool {name}", False


def drive(
    policy: Policy, workspace: Path, prompts: Sequence[str], state: Path | None, notes: str | None = None
) -> list[str]:
    """Run ``prompts`` as one resumed session; returns the rule that answered each request."""
    memory = connect(state) if state is not None else None
    try:
        conversation = Conversation(policy, workspace, memory, notes)
        for text in prompts:
            conversation.prompt(text)
        return conversation.rules
    finally:
        if memory is not None:
            memory.close()
