"""How Claude Code marks what it injects into a request: ``<system-reminder>`` blocks.

Hook context is ``<system-reminder>\\n<hookName> hook additional context: <text>\\n</system-reminder>`` (or ``hook
success: <text>`` for the plain standard output of a prompt-time or session-start hook): a whole user-message text
block (prompt-time and session-start context; CLI 2.1.197 placed a PostToolUse hook's block there too), or appended
to a tool result after the tool's own output, for a ``PostToolUse:<Tool>`` hook of the tool that produced it (CLI
2.1.332 appends it there, and on resume 2.1.197 merged it there).

A file the CLI loads by itself (the user-level ``CLAUDE.md``) is in a reminder that is a whole user-message text
block (CLI 2.1.332: the first message's), as ``Contents of <path> (<what it is>):``, a blank line and the file's
text, up to the next such header or the end of the block.
"""

from __future__ import annotations

import functools
import re

from ..base import InjectedBlock, InjectionFormat, LoadedFile
from ..transcript import Channel
from .session_log import hook_channel

__all__ = ["REMINDER", "ClaudeInjection"]

REMINDER = "<system-reminder>"
_REMINDER_START = "\n\n<system-reminder>\n"
_REMINDER_END = "\n</system-reminder>"
_HOOK_BLOCK = re.compile(
    r"<system-reminder>\n(?P<hook>\S+) hook (?:additional context|success): (?P<text>.*)\n</system-reminder>\n?", re.S
)
# How the CLI names a file it loaded into its context: "Contents of /home/dev/.claude/CLAUDE.md (user's private
# global instructions for all projects):" and a blank line, at the start of a line.
_LOADED_FILE = re.compile(r"^Contents of (?P<path>/\S+) \([^\n]*\):\n\n", re.M)


class ClaudeInjection(InjectionFormat):
    def is_harness_text(self, text: str) -> bool:
        return text.startswith(REMINDER)

    def hook_block(self, text: str) -> InjectedBlock | None:
        block = _HOOK_BLOCK.fullmatch(text)
        return None if block is None else InjectedBlock(hook=block["hook"], text=block["text"])

    def split_tool_output(self, text: str) -> tuple[str, tuple[str, ...]]:
        """Read from the end: each reminder block appended after the output, a blank line before it."""
        blocks: list[str] = []
        rest = text.rstrip("\n")
        while rest.endswith(_REMINDER_END):
            start = rest.rfind(_REMINDER_START)
            if start < 0:
                break
            blocks.insert(0, rest[start + 2 :])
            rest = rest[:start]
        return rest, tuple(blocks)

    def loaded_files(self, text: str) -> tuple[LoadedFile, ...]:
        return _loaded_files(text) if self.is_harness_text(text) else ()

    def hook_channel(self, hook: str) -> Channel:
        return hook_channel(hook)

    def tool_hook(self, hook: str, tool: str) -> bool:
        return hook == f"PostToolUse:{tool}"


@functools.lru_cache(maxsize=64)
def _loaded_files(text: str) -> tuple[LoadedFile, ...]:
    """Each file loaded in the reminder ``text``: up to the next header, or the end. Remembered: every request of a
    conversation repeats its first message, and grading reads each request's."""
    body = text.rstrip("\n").removesuffix(_REMINDER_END.lstrip("\n"))
    headers = list(_LOADED_FILE.finditer(body))
    ends = [header.start() for header in headers[1:]] + [len(body)] if headers else []
    return tuple(
        LoadedFile(path=header["path"], text=body[header.end() : end])
        for header, end in zip(headers, ends, strict=True)
    )
