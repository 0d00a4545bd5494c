"""Where the policy stand-in and the real CLI part ways as the static baseline's notes grow with the pool.

For each pool size: the example's static notes (the evidence and that many distractors, as the static-notes
provisioner writes them) become the agent user's ``~/.claude/CLAUDE.md``; the real Claude Code CLI runs the
harbor-holds challenge against the policy-mode gateway on loopback, as a non-root user, in a scratch workspace.
Printed per size: the notes' characters against the CLI's own "large CLAUDE.md" advisory (40,000 characters: 5% of
a 200,000-token window at 4 characters a token), the largest request the gateway received and its estimated tokens
(the gateway's own estimate: a character in four) against the model's 200,000-token window, whether the whole
notes reached the model, and what the arm did. The stand-in answers any request; a real provider refuses one past
the window, so past that size a policy run says nothing about what a model would have done.
Usage: python3 benchmarks/notes_context.py [SIZE ...]   (default 0 100 500 1000 2000 4000)
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gateway import ArmKey, DirectoryRecorder, Gateway, GatewayConfig, Mode, PolicyPin
from bench.provision.pool import pool_documents
from bench.suite.suite import open_suite, render_policy

REPO = Path(__file__).resolve().parent.parent
SUITE = REPO / "challenges" / "example"
ADVISORY_CHARS = 40_000  # Claude Code: max(40,000, 5% of the context window x 4 characters a token)
WINDOW_TOKENS = 200_000
USER = "agentuser"
KEY = "sk-notes-context"


def _notes(size: int) -> str:
    """The static-notes provisioner's file for the evidence and ``size`` distractors (its own format)."""
    suite = open_suite(SUITE)
    evidence = suite.fixture_root / suite.fixture.evidence_corpus.path
    documents = {p.relative_to(evidence).as_posix(): p.read_text() for p in evidence.rglob("*.md")}
    assert suite.fixture.distractors is not None
    # Past the fixture's 500: the same seed's longer pool, of which the fixture's is the prefix.
    pool = suite.fixture.distractors.model_copy(update={"size": max(size, 1)})
    documents |= {path: data.decode() for path, data in pool_documents(pool, size)}
    title = "# Project notes\n\nWhat the team wrote down about this project: decisions, incidents and working notes.\n"
    return "\n".join([title, *(f"## {path}\n\n{documents[path].strip()}\n" for path in sorted(documents))])


@dataclass(frozen=True)
class Measured:
    size: int
    chars: int  # the notes file
    largest: int  # the largest request body, in bytes
    whole: bool  # every request after the first carried the notes to their last line
    requests: int
    exit: int
    answered: bool  # the grounded answer was written

    @property
    def tokens(self) -> int:
        return self.largest // 4 + 1  # the gateway's own estimate


def _run(size: int) -> Measured:
    scratch = Path(tempfile.mkdtemp(prefix="notes-", dir="/tmp"))
    workspace, home = scratch / "ws", scratch / "home"
    (workspace / "tallybook").mkdir(parents=True)
    shutil.copy(SUITE / "project-src" / "02-import" / "tallybook" / "importer.py", workspace / "tallybook")
    (home / ".claude").mkdir(parents=True)
    notes = _notes(size)
    (home / ".claude" / "CLAUDE.md").write_text(notes)
    subprocess.run(["chown", "-R", f"{USER}:{USER}", str(scratch)], check=True)
    os.chmod(scratch, 0o755)
    policy = render_policy((SUITE / "harbor-holds" / "policy.json").read_bytes(), str(workspace))
    (scratch / "policy.json").write_bytes(policy)
    config = GatewayConfig(
        mode=Mode.POLICY,
        arms=(ArmKey(label="a", key_sha256=hashlib.sha256(KEY.encode()).hexdigest()),),
        policy=PolicyPin(path="policy.json", sha256=hashlib.sha256(policy).hexdigest()),
    )
    prompt = json.loads((SUITE / "harbor-holds" / "challenge.json").read_text())["prompt"]
    with Gateway(config, DirectoryRecorder(scratch / "log"), policy_root=scratch) as gateway:
        env = [f"HOME={home}", f"USER={USER}", "PATH=/usr/local/bin:/usr/bin:/bin", f"ANTHROPIC_BASE_URL={gateway.url}",
               f"ANTHROPIC_API_KEY={KEY}", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"]  # fmt: skip
        argv = ["runuser", "-u", USER, "--", "env", "-i", *env, "claude", "-p", prompt, "--output-format", "json",
                "--permission-mode", "bypassPermissions", "--model", "claude-sonnet-4-5"]  # fmt: skip
        done = subprocess.run(argv, cwd=workspace, capture_output=True, timeout=300, check=False)
    requests = [json.loads(line) for line in (scratch / "log" / "exchanges.jsonl").read_text().splitlines()]
    largest = max(len(json.dumps(r["request_body"], separators=(",", ":"))) for r in requests)
    tail = notes.strip().splitlines()[-1]
    answered = (workspace / "ANSWER.md").is_file() and "95.85" in (workspace / "ANSWER.md").read_text()
    shutil.rmtree(scratch, ignore_errors=True)
    return Measured(
        size=size,
        chars=len(notes),
        largest=largest,
        whole=all(tail in json.dumps(r["request_body"]) for r in requests[1:]),
        requests=len(requests),
        exit=done.returncode,
        answered=answered,
    )


def main() -> None:
    sizes = [int(size) for size in sys.argv[1:]] or [0, 100, 500, 1000, 2000, 4000]
    print(f"{'pool':>5} {'notes chars':>12} {'x advisory':>10} {'largest request':>16} {'est. tokens':>11} "
          f"{'x window':>8}  notes whole  requests  CLI exit  grounded answer")  # fmt: skip
    for size in sizes:
        r = _run(size)
        print(
            f"{r.size:>5} {r.chars:>12,} {r.chars / ADVISORY_CHARS:>10.2f} {r.largest:>16,} {r.tokens:>11,} "
            f"{r.tokens / WINDOW_TOKENS:>8.2f}  {r.whole!s:>11}  {r.requests:>8}  {r.exit:>8}  {r.answered}"
        )


if __name__ == "__main__":
    main()
