"""What each registered harness's contract test reads: a recorded session and the texts its formats produce.

A new harness adds its entry here (a recorded session of the real CLI, as tests/grading/data holds Claude Code's);
the contract test refuses a registered harness without one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bench.harness.transcript import Channel

__all__ = ["SAMPLES", "Samples"]

_GRADING = Path(__file__).resolve().parents[1] / "grading" / "data"
_CODEX = Path(__file__).resolve().parent / "codex" / "data"  # recorded from codex-cli 0.169.0


@dataclass(frozen=True)
class Samples:
    session: bytes  # a session file the real CLI wrote
    outputs: tuple[bytes, ...]  # the standard output of each of its steps, in order
    session_id: str  # the id the first step's output names
    prompt: str  # the first prompt the runner sent
    hook_text: str  # a user-side text block carrying hook context
    hook: str  # ... the hook as the harness names it
    hook_body: str  # ... and its text
    channel: Channel  # ... and its channel
    tool_text: str  # a tool result's content with the harness's block after the tool's output
    tool_output: str  # ... the tool's own output
    tool: str  # ... the tool whose post-tool hook the block is
    loaded_text: str  # a harness text block carrying a file the harness loaded by itself
    loaded_path: str
    loaded_body: str
    credential: bytes  # a provider key of the harness's provider (made up, of the documented shape)


def _captured(part: str) -> bytes:
    return (_GRADING / f"with-hooks.{part}.jsonl").read_bytes()


SAMPLES: dict[str, Samples] = {
    "claude-code": Samples(
        session=_captured("session"),
        outputs=(_captured("stream"), _captured("resume.stream")),
        session_id="8f735b07-dbe6-4279-8815-c5bacb4373e9",
        prompt="Please look at the notes file.",
        hook_text=(
            "<system-reminder>\nUserPromptSubmit hook additional context: the ledger is quartz\n</system-reminder>"
        ),
        hook="UserPromptSubmit",
        hook_body="the ledger is quartz",
        channel=Channel.PROMPT_TIME_RETRIEVAL,
        tool_text="line 1\n\n<system-reminder>\nPostToolUse:Read hook additional context: see a.py\n</system-reminder>",
        tool_output="line 1",
        tool="Read",
        loaded_text=(
            "<system-reminder>\nContents of /home/dev/.claude/CLAUDE.md (user's private global instructions for all "
            "projects):\n\n# Notes\nquartz\n</system-reminder>"
        ),
        loaded_path="/home/dev/.claude/CLAUDE.md",
        loaded_body="# Notes\nquartz",
        credential=b"sk-ant-api03-" + b"Q" * 40,
    ),
    "codex": Samples(
        session=(_CODEX / "rollout.jsonl").read_bytes(),
        outputs=((_CODEX / "exec.jsonl").read_bytes(), (_CODEX / "resume.jsonl").read_bytes()),
        session_id="01a246ae-84b2-75c0-870f-27741d120bc9",
        prompt="make a file",
        hook_text="HOOK-CONTEXT-UserPromptSubmit-",  # a developer message's bare text: unmarked
        hook="UserPromptSubmit",
        hook_body="HOOK-CONTEXT-UserPromptSubmit-",
        channel=Channel.PROMPT_TIME_RETRIEVAL,
        tool_text="Chunk ID: 12ff03\nProcess exited with code 0\nOutput:\nalpha\n",
        tool_output="alpha",
        tool="exec_command",
        loaded_text="# AGENTS.md instructions\n\n<INSTRUCTIONS>\n# Notes\nquartz\n</INSTRUCTIONS>",
        loaded_path="/home/dev/.codex/AGENTS.md",
        loaded_body="# Notes\nquartz",
        credential=b"sk-proj-" + b"Q" * 40,
    ),
}
