"""Run the real Claude Code CLI on this host, as a non-root user, against a gateway on loopback.

Shared by the real-CLI tests and the fixture capture script. A missing CLI or user fails the test with the
command that fixes it: these tests exist to catch a CLI that changed, so they never skip.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["AGENT_USER", "CliRun", "Home", "make_dir", "require_claude", "run_claude"]

AGENT_USER = "agentuser"
INSTALL_HINT = "install it with `npm install -g @anthropic-ai/claude-code` (the package ships a native binary)"
_PATH = "/usr/local/bin:/usr/bin:/bin"


def require_claude() -> str:
    found = shutil.which("claude", path=_PATH) or shutil.which("claude")
    if found is None:
        pytest.fail(f"the Claude Code CLI `claude` is not on PATH; {INSTALL_HINT}")
    if os.geteuid() == 0:
        try:
            import pwd

            pwd.getpwnam(AGENT_USER)
        except KeyError:
            pytest.fail(f"running as root needs the non-root user {AGENT_USER!r}: `useradd -m {AGENT_USER}`")
    return found


def make_dir(prefix: str) -> Path:
    """A fresh directory under /tmp that the agent user owns (pytest's tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    path.chmod(0o755)
    return path


def _give_to_agent(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", f"{AGENT_USER}:{AGENT_USER}", str(path)], check=True)


@dataclass(frozen=True)
class Home:
    """The agent user's HOME for one run: user-level settings (the memory hooks) and the session store."""

    path: Path

    @classmethod
    def create(cls, hooks: dict[str, object] | None) -> Home:
        home = make_dir("home-")
        (home / ".claude").mkdir()
        if hooks is not None:
            (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
        _give_to_agent(home)
        return cls(home)

    def session_file(self, session_id: str) -> Path:
        found = sorted((self.path / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
        if len(found) != 1:
            raise AssertionError(f"expected one session file for {session_id} under {self.path}, found {found}")
        return found[0]


@dataclass(frozen=True)
class CliRun:
    returncode: int
    stream: bytes  # stream-json stdout
    stderr: str
    session_id: str


def run_claude(
    workspace: Path,
    home: Home,
    base_url: str,
    api_key: str,
    prompt: str,
    resume: str | None = None,
    check: bool = True,
) -> CliRun:
    _give_to_agent(workspace)
    env = {
        "PATH": _PATH,
        "HOME": str(home.path),
        "USER": AGENT_USER,
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": api_key,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    argv = [require_claude(), "-p", prompt, "--output-format", "stream-json", "--verbose"]
    argv += ["--permission-mode", "bypassPermissions", "--model", "claude-sonnet-4-5"]
    argv += ["--resume", resume] if resume else []
    if os.geteuid() == 0:
        runuser = shutil.which("runuser") or "/usr/sbin/runuser"
        argv = [runuser, "-u", AGENT_USER, "--", "env", "-i", *(f"{k}={v}" for k, v in env.items()), *argv]
        env = {"PATH": _PATH}
    done = subprocess.run(argv, cwd=workspace, env=env, capture_output=True, timeout=120)
    session_ids = {json.loads(line).get("session_id") for line in done.stdout.splitlines() if line.strip()}
    session_ids.discard(None)
    if len(session_ids) != 1 or (check and done.returncode != 0):
        raise AssertionError(
            f"claude exited {done.returncode} with session ids {session_ids}; stderr: {done.stderr.decode()[-2000:]}"
        )
    return CliRun(done.returncode, done.stdout, done.stderr.decode(), session_ids.pop())
