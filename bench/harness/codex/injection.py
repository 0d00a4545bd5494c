"""How Codex marks what it injects, as far as one text can show it (:class:`~..base.InjectionFormat`).

The user-level instructions file arrives wrapped: ``# AGENTS.md instructions`` (`` for <cwd>`` when project files
join it), a blank line, ``<INSTRUCTIONS>``, the text, ``</INSTRUCTIONS>``, as the first part of the message that
also carries the ``<environment_context>``. Hook context carries no mark at all: it is a developer message holding
the hook's raw text, told apart only by its role and place in the request, which no single text shows: grading
reads it by its place (:meth:`placed_hook`), the rollout reader by its record, never from a text alone.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import ClassVar

from ..base import InjectedBlock, InjectionFormat, LoadedFile
from ..transcript import Channel
from .config import INSTRUCTIONS_PATH
from .injected import agents_text, hook_name

__all__ = ["INSTRUCTIONS_FILE", "CodexInjection"]

# The container user's home (bench.sandbox.layout.USER_HOME, a layer above; a test holds them equal).
CONTAINER_HOME = PurePosixPath("/home/dev")
INSTRUCTIONS_FILE = str(CONTAINER_HOME / INSTRUCTIONS_PATH)  # the wrapper names no path: the one file it reads
_HARNESS_TEXTS = ("# AGENTS.md instructions", "<environment_context>", "<skills_instructions>", "<permissions ")
# How the CLI frames a tool's output for the model (seen in real runs: an MCP tool's ``Wall time: 0.1005 seconds``,
# exec_command's ``Chunk ID``/``Wall time``/``Process exited with code``/``Original token count``, apply_patch's
# ``Exit code``/``Wall time``), each header line once at most, then ``Output:`` on a line of its own.
_FRAMING = re.compile(
    r"\A(?:Chunk ID: [0-9a-f]+\n)?(?:Exit code: -?[0-9]+\n)?Wall time: [0-9.]+ seconds\n"
    r"(?:Process exited with code -?[0-9]+\n)?(?:Original token count: [0-9]+\n)?Output:\n"
)
_CHANNELS = {
    "UserPromptSubmit": Channel.PROMPT_TIME_RETRIEVAL,
    "PostToolUse": Channel.ANCHOR_TRIGGERED_RECALL,
    "SessionStart": Channel.SESSION_START,
}


class CodexInjection(InjectionFormat):
    marked: ClassVar[bool] = False

    def is_harness_text(self, text: str) -> bool:
        return text.startswith(_HARNESS_TEXTS)

    def hook_block(self, text: str) -> InjectedBlock | None:
        return None  # unmarked: a hook's context is known by its item's role and place, not by its text

    def split_tool_output(self, text: str) -> tuple[str, tuple[str, ...]]:
        # The CLI appends nothing to a tool's output (hook context is an item of its own) but frames it: a header of
        # its own lines (wall time, exit code, ...) before ``Output:``, which is no part of what the tool answered.
        framed = _FRAMING.match(text)
        return (text[framed.end() :] if framed else text), ()

    def loaded_files(self, text: str) -> tuple[LoadedFile, ...]:
        loaded = agents_text(text)
        return () if loaded is None else (LoadedFile(path=INSTRUCTIONS_FILE, text=loaded),)

    def hook_channel(self, hook: str) -> Channel:
        return _CHANNELS.get(hook.split(":", 1)[0], Channel.OTHER)

    def tool_hook(self, hook: str, tool: str) -> bool:
        return hook in ("PostToolUse", f"PostToolUse:{tool}")

    def placed_hook(self, text: str, trigger: str | None, after_prompt: bool) -> InjectedBlock | None:
        return InjectedBlock(hook=hook_name(trigger, after_prompt), text=text)
