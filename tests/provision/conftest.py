"""Shared pieces for provisioner tests: a small fixture on disk and a scriptable misbehaving provisioner.

The fake provisioner is a real executable (a stdlib Python script) run through the real adapter; its behaviour per
verb comes from a JSON file beside it, and every invocation appends its verb to ``calls.log`` so tests can count
restore / snapshot / destroy calls across processes.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.provision import Fixture, Provisioner, artifact_sha256, load_fixture
from bench.provision.protocol_call import ProcessLimits

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_FIXTURE = REPO / "tests" / "provision" / "data" / "example-evidence"

FAKE_PROVISIONER = r"""
import json, os, sys, time
here = os.path.dirname(os.path.abspath(__file__))
verb = sys.argv[1]
with open(os.path.join(here, verb + ".pid"), "w") as pid:
    pid.write(str(os.getpid()))
with open(os.path.join(here, "calls.log"), "a") as log:  # after the pid file: tests wait on this log
    log.write(verb + "\n")
request = json.loads(sys.stdin.read())
with open(os.path.join(here, verb + ".request.json"), "w") as saved:
    json.dump(request, saved)
config = json.load(open(os.path.join(here, "behaviour.json")))
mode = config.get(verb, "ok")
OK = {
    "restore": {"project": "p1", "queue_before_count": 0, "restore_seconds": 0.01},
    "snapshot": {"state": {"present": True, "items": 3, "fingerprint": "0" * 64},
                 "probes": config.get("answers", []), "queue_after_count": 0, "snapshot_seconds": 0.01},
    "destroy": {"ok": True},
}
reply = OK[verb]
if verb == "restore" and config.get("locations"):
    reply = {**reply, "locations": {"version": 1, "paths": config["locations"]}}
if mode == "ok":
    print(json.dumps(reply))
elif mode == "exit":
    print("cannot reach the index service", file=sys.stderr)
    print(json.dumps(reply))
    sys.exit(3)
elif mode == "sleep":
    time.sleep(60)
elif mode == "flood":
    sys.stdout.write("x" * (4 << 20))
elif mode == "two":
    print(json.dumps(reply)); print(json.dumps(reply))
elif mode == "array":
    print(json.dumps([reply]))
elif mode == "garbage":
    print("restored fine, thanks")
elif mode == "empty":
    pass
elif mode == "duplicate":
    print('{"ok": true, "ok": true}')
elif mode == "nan":
    print('{"project": "p1", "queue_before_count": 0, "restore_seconds": NaN}')
elif mode == "extra":
    print(json.dumps(dict(reply, backend="pgvector")))
elif mode == "invalid":
    print(json.dumps({k: v for k, v in reply.items() if k != sorted(reply)[0]}))
elif mode == "chatty":
    sys.stderr.write("progress line\n" * 100000)
    sys.stderr.flush()
    print(json.dumps(reply))
elif mode == "stderr-only":
    print(json.dumps(reply), file=sys.stderr)
else:
    raise SystemExit("unknown mode " + mode)
"""


@dataclass
class Fake:
    """A fake provisioner: its argv prefix, its directory and a reader for its call log."""

    directory: Path
    prefix: tuple[str, ...]

    def calls(self) -> list[str]:
        log = self.directory / "calls.log"
        return log.read_text().split() if log.exists() else []

    def request(self, verb: str) -> dict[str, object]:
        return json.loads((self.directory / f"{verb}.request.json").read_text())

    def alive(self, verb: str) -> bool:
        """Whether the process that last ran ``verb`` still exists."""
        try:
            os.kill(int((self.directory / f"{verb}.pid").read_text()), 0)
        except ProcessLookupError:
            return False
        return True

    def provisioner(self, root: Path, timeout: float = 20.0, stdout_bytes: int = 1 << 20) -> Provisioner:
        return Provisioner(self.prefix, root, ProcessLimits(timeout_seconds=timeout, stdout_bytes=stdout_bytes))


@pytest.fixture
def fake(tmp_path: Path) -> Callable[..., Fake]:
    def make(answers: list[dict[str, object]] | None = None, **modes: str) -> Fake:
        directory = tmp_path / "fake"
        directory.mkdir()
        (directory / "prov.py").write_text(FAKE_PROVISIONER)
        (directory / "behaviour.json").write_text(json.dumps({**modes, "answers": answers or []}))
        return Fake(directory, (sys.executable, str(directory / "prov.py")))

    return make


def write_fixture(root: Path) -> Fixture:
    """A minimal valid fixture: a two-note evidence corpus, one empty graph arm, one full-text probe."""
    (root / "evidence").mkdir(parents=True)
    (root / "evidence" / "cache.md").write_text("# Cache keys\n\nAnchors: src/cache.py\n\nKeys include the tenant.\n")
    (root / "evidence" / "deploy.md").write_text("# Deploys\n\nDeploys happen on Tuesdays.\n")
    (root / "graph.json").write_text('{"nodes": [], "edges": []}\n')
    manifest = {
        "fixture_id": "tiny",
        "evidence_corpus": {"path": "evidence", "sha256": artifact_sha256(root / "evidence")},
        "graph_arms": [
            {"name": "plain", "graph": {"path": "graph.json", "sha256": artifact_sha256(root / "graph.json")}}
        ],
        "probes": [{"name": "tenant", "kind": "full-text", "query": "tenant cache keys", "expected": ["cache.md"]}],
        "memory_phrases": ["Keys include the tenant"],
    }
    (root / "fixture.json").write_text(json.dumps(manifest))
    return load_fixture(root)


@pytest.fixture
def tiny_fixture(tmp_path: Path) -> tuple[Path, Fixture]:
    root = tmp_path / "fixture"
    return root, write_fixture(root)
