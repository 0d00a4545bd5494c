"""A small memory scenario for the real CLI using all three hook channels: files, hooks, policy, phrases.

The policy reads only the request: it opens the anchored file if and only if the anchor recall reached the
model, and its final answer echoes the prompt-time phrase in both arms (a planted agent-authored echo).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from bench.gateway import Policy

__all__ = [
    "ANCHORED_FILE",
    "ANCHOR_PHRASE",
    "FOLLOW_UP",
    "PROMPT",
    "RECALL_PHRASE",
    "STARTUP_PHRASE",
    "hooks",
    "policy_for",
    "write_workspace",
]

PROMPT = "Please look at the notes file."
FOLLOW_UP = "Now summarise what you found."
RECALL_PHRASE = "quartz ledger convention"
ANCHOR_PHRASE = "notes.txt pairs with zeta.cfg"
ANCHORED_FILE = "zeta.cfg"
STARTUP_PHRASE = "amber release train"

_RECALL = f"""import json, sys
json.load(sys.stdin)
print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "UserPromptSubmit",
    "additionalContext": "Recall: the {RECALL_PHRASE} applies to this project."}}}}))
"""
_STARTUP = f"""import json, sys
json.load(sys.stdin)
print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "SessionStart",
    "additionalContext": "Project memory: releases ship on the {STARTUP_PHRASE}."}}}}))
"""
_ANCHOR = f"""import json, sys
event = json.load(sys.stdin)
if event.get("tool_input", {{}}).get("file_path", "").endswith("/notes.txt"):
    print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "PostToolUse",
        "additionalContext": "Anchor: {ANCHOR_PHRASE} (read both together)."}}}}))
"""


def write_workspace(workspace: Path) -> None:
    (workspace / "notes.txt").write_text("alpha beta\n")
    (workspace / ANCHORED_FILE).write_text("gamma=1\n")


def hooks(hook_dir: Path) -> dict[str, object]:
    """User-level hook settings whose scripts live in ``hook_dir`` (outside the workspace, as memory does)."""
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
    hook_dir.mkdir(parents=True, exist_ok=True)
    (hook_dir / "recall.py").write_text(_RECALL)
    (hook_dir / "anchor.py").write_text(_ANCHOR)
    (hook_dir / "startup.py").write_text(_STARTUP)

    def command(script: str) -> list[dict[str, object]]:
        return [{"type": "command", "command": f"{python} {hook_dir / script}", "timeout": 30}]

    return {
        "SessionStart": [{"hooks": command("startup.py")}],
        "UserPromptSubmit": [{"hooks": command("recall.py")}],
        "PostToolUse": [{"matcher": "Read", "hooks": command("anchor.py")}],
    }


def policy_for(workspace: Path) -> bytes:
    """The policy file bytes for a workspace (Read needs absolute paths, and the workspace is a temp dir)."""
    policy = {
        "rules": [
            {
                "name": "follow-anchor",
                "when": {"contains": [ANCHOR_PHRASE], "lacks": ["gamma=1"]},
                "reply": [{"type": "tool_use", "name": "Read", "input": {"file_path": f"{workspace}/{ANCHORED_FILE}"}}],
            },
            {
                "name": "open-notes",
                "when": {"turn": 1},
                "reply": [
                    {"type": "text", "text": "Let me open the notes."},
                    {"type": "tool_use", "name": "Read", "input": {"file_path": f"{workspace}/notes.txt"}},
                ],
            },
        ],
        "default": [{"type": "text", "text": f"Done. I will keep the {RECALL_PHRASE} in mind."}],
    }
    Policy.model_validate_json(json.dumps(policy))  # refuse a broken scenario here, not inside the gateway
    return json.dumps(policy, indent=1).encode()
