"""JSON from outside is read by the one strict reader: a new ``json.loads`` cannot slip in unnoticed.

Every module that parses JSON without :mod:`bench.contracts.strict_json` is listed here with the reason its input
is not from outside (the store's own canonical documents, a message the runner wrote itself), or, for the few
outside readers still on ``json.loads``, with the reason they are not converted yet. Adding a parse anywhere
else fails this test: route it through ``parse_json`` / ``parse_contract`` / ``read_contract``, or say here why
its bytes are trusted.
"""

from __future__ import annotations

import re
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"
PARSE = re.compile(r"\bjson\.loads?\(|\.model_validate_json\(|\bJSONDecoder\(")

TRUSTED = {
    "contracts/strict_json.py": "the strict reader itself",
    "contracts/files.py": "validates bytes the strict reader accepted first",
    "provision/protocol_call.py": "validates a reply the strict reader accepted first",
    "store/store.py": "store documents: canonical, written by this package, re-hashed on every read",
    "store/references.py": "store documents read through the verifying store",
    "builder/execution.py": "the kind of a store document",
    "pipeline/check.py": "the kind of a store document",
    "pipeline/status.py": "the kind of a store document",
    "builder/stage.py": "params re-read from this package's own canonical JSON",
    "pipeline/executor.py": "an invocation the plan wrote and doit hands back",
    "pipeline/doit_tasks.py": "an invocation the plan wrote, read back to name the stage that failed",
    "pipeline/ray_executor.py": "an invocation the plan wrote, handed to a Ray task",
    "sandbox/backends/launch.py": "the launcher's own argv, written by the process backend",
    "sandbox/backends/lease.py": "lease files the runners write",
    "sandbox/backends/docker/images.py": "the Docker engine's progress stream, for display only",
    "gateway/exchange.py": "the gateway's own exchange log",
    "scaffold/templates.py": "the text of a template provisioner written into a user's suite, never run here",
    "agent/replay_tools.py": "the replay driver inside the container (its own program); answers are read strictly",
}
# Outside input still parsed with json.loads: each owner converts it (the reasons are why it is not done here).
NOT_YET = {
    "gateway/server.py": "an agent's request body, recorded as sent: one that does not parse is kept as text",
    "gateway/forward.py": "a provider's answer, recorded as sent: one that does not parse is kept as text",
    "gateway/stream.py": "provider SSE payloads, recorded as relayed; an unreadable stream is charged its upper bound",
    "gateway/dialects/anthropic.py": "a streamed tool input, reassembled as relayed: unparsable stays text",
    "gateway/dialects/responses_items.py": "a function call's arguments as the client sent them: non-JSON stays text",
    "harness/claude_code/cli.py": "Claude Code's stream-json output; the agent's work in progress owns it",
    "harness/claude_code/session_log.py": "Claude Code transcripts: may hold a lone surrogate the strict reader "
    "refuses",
    "fence/provider.py": "a quota API read with Decimal numbers, which the strict reader does not yet offer",
}


def test_every_json_parse_is_the_strict_reader_or_says_why_not() -> None:
    parsing = {
        path.relative_to(BENCH).as_posix()
        for path in BENCH.rglob("*.py")
        if not path.relative_to(BENCH).as_posix().startswith("memory/")  # a separate program with its own files
        and PARSE.search(path.read_text())
    }
    unexplained = sorted(parsing - TRUSTED.keys() - NOT_YET.keys())
    assert not unexplained, f"parse JSON from outside with bench.contracts.strict_json: {unexplained}"
    stale = sorted(TRUSTED.keys() - parsing)
    assert not stale, f"no longer parse JSON themselves; drop them from TRUSTED: {stale}"
