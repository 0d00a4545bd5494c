"""The files `stele-bench new suite` writes, as text. JSON documents are built as data in ``suite.py``.

Agent-visible text (the prompt, the evidence note, the graph) names neither the apparatus nor the experiment, so a
scaffolded suite passes certification as it stands; the runner-owned files (verifier, oracle) carry the
:data:`~bench.scaffold.unwritten.UNWRITTEN_MARKER` until a person replaces them.
"""

from __future__ import annotations

from .unwritten import UNWRITTEN_MARKER

__all__ = ["EVIDENCE_NOTE", "ORACLE", "PROMPT", "PROVISIONER", "README", "VERIFIER"]

PROMPT = (
    "Describe the task here as a colleague would ask for it, in the project's own words: what to change or find "
    "out, and where the result goes (for example: write your findings to ANSWER.md in the repository root)."
)

VERIFIER = f'''"""Verifier: exit 0 when the agent's work is right, non-zero (printing why) when it is not.

It runs with python3 in a fresh container, the arm's final workspace as its working directory, no network. It
must fail on the untouched project and pass once oracle.py has run: calibration checks both before any pair.
"""

import sys

# {UNWRITTEN_MARKER}; delete this line once the check below is written.


def main() -> int:
    print("this verifier is still the template: it rejects every tree until the check is written")
    return 1


if __name__ == "__main__":
    sys.exit(main())
'''

ORACLE = f'''"""Oracle: a reference solution, run in the untouched workspace; afterwards the verifier must pass."""

# {UNWRITTEN_MARKER}; delete this line once the solution below is written.
'''

EVIDENCE_NOTE = """\
# What the team knows about this project

Anchors: README.md

Write here what the project's people know that its code does not say: the decision behind an odd line, the
incident that explains a guard, the convention nobody wrote down. One document per note, decision or issue
thread; `## ` headings split a document into passages.
"""

README = """\
# {suite_id}

A suite of one project at a pinned commit ({commit}), one fixture and the challenges asked of it.

1. Write each challenge: its prompt in `challenge.json`, `verify.py` (exit 0 when the work is right) and
   `oracle.py` (a reference solution the verifier passes). Until both are written `stele-bench run` refuses the
   suite, naming them.
2. Write the fixture's evidence (`fixture/evidence/`), its graph (`fixture/graphs/notes.json`), its probes and
   memory phrases (`fixture/fixture.json`).
3. In policy mode a challenge's `policy.json` stands in for the model; edit it, or set `gateway_mode`.
4. `stele-bench pin {directory}` re-pins every SHA-256 after an edit; `stele-bench prereg freeze {directory}`
   freezes the prompts, verifiers, model and budget before the first run; `stele-bench run {directory}` runs it.

`provisioner.py` is a template memory system speaking the provisioner protocol (restore, snapshot, destroy); try
it by hand with `stele-bench provision restore --provisioner "{directory}/provisioner.py --home /tmp/mem"
--fixture-root {directory}/fixture --graph-arm notes --run-identity manual-1`.
"""

PROVISIONER = '''#!/usr/bin/env python3
"""A template memory system speaking the provisioner protocol: one JSON object on stdin, one on stdout.

    provisioner.py [--home DIR] restore|snapshot|destroy

restore copies the fixture's evidence corpus into DIR/<project>, joins it into one notes file it names to the
runner as the location ``notes`` (suite.json mounts it into the treatment container, where a prompt hook hands it
to the model) and remembers the probes; snapshot re-reads what is there and answers full-text probes by counting
query words per document; destroy removes the project.
Replace the bodies with calls into your own system; keep the messages (`stele-bench schema restore-request` and
friends give their JSON Schemas). Diagnostics go to stderr, never stdout.
"""

import argparse
import hashlib
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

WORD = re.compile(r"[a-z0-9]+")


def restore(home, request):
    started = time.monotonic()
    project = "p-" + re.sub(r"[^a-z0-9.-]", "-", request["run_identity"].lower())[:60]
    target = home / project
    shutil.rmtree(target, ignore_errors=True)
    source = Path(request["artifacts"]["evidence_corpus"]["path"])
    if source.is_dir():
        shutil.copytree(source, target / "evidence")
    else:
        (target / "evidence").mkdir(parents=True)
        shutil.copy(source, target / "evidence" / source.name)
    (target / "probes.json").write_text(json.dumps(request.get("probes", [])))
    notes = target / "notes.txt"
    notes.write_text("\\n\\n".join(_documents(target / "evidence").values()))
    return {
        "project": project,
        "queue_before_count": 0,
        "restore_seconds": time.monotonic() - started,
        "locations": {"version": 1, "paths": {"notes": str(notes)}},
    }


def _documents(root):
    paths = sorted(path for path in root.rglob("*") if path.is_file())
    return {path.relative_to(root).as_posix(): path.read_text(errors="replace") for path in paths}


def _answer(probe, documents):
    if probe["kind"] != "full-text":
        return {"name": probe["name"], "kind": probe["kind"], "status": "unsupported", "reason": "not implemented"}
    words = set(WORD.findall(probe["query"].lower()))
    scores = {doc: len(words & set(WORD.findall(text.lower()))) for doc, text in documents.items()}
    ranked = [doc for doc, score in sorted(scores.items(), key=lambda item: -item[1]) if score]
    return {"name": probe["name"], "kind": probe["kind"], "status": "answered", "hits": ranked[: probe["top_k"]]}


def snapshot(home, request):
    started = time.monotonic()
    target = home / request["project"]
    documents = _documents(target / "evidence") if target.is_dir() else {}
    probes = json.loads((target / "probes.json").read_text()) if target.is_dir() else []
    listing = "".join(f"{doc}\\t{hashlib.sha256(text.encode()).hexdigest()}\\n" for doc, text in documents.items())
    fingerprint = hashlib.sha256(listing.encode()).hexdigest()
    return {
        "state": {"present": bool(documents), "items": len(documents), "fingerprint": fingerprint},
        "probes": [_answer(probe, documents) for probe in probes],
        "queue_after_count": 0,
        "snapshot_seconds": time.monotonic() - started,
    }


def destroy(home, request):
    shutil.rmtree(home / request["project"], ignore_errors=True)
    return {"ok": True}


def main():
    parser = argparse.ArgumentParser(description="a template memory system")
    default = Path(tempfile.gettempdir()) / "template-memory"
    parser.add_argument("--home", type=Path, default=default, help="directory holding this system's projects")
    parser.add_argument("verb", choices=["restore", "snapshot", "destroy"])
    args = parser.parse_args()
    args.home.mkdir(parents=True, exist_ok=True)
    request = json.loads(sys.stdin.read())
    response = {"restore": restore, "snapshot": snapshot, "destroy": destroy}[args.verb](args.home, request)
    sys.stdout.write(json.dumps(response) + "\\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''
