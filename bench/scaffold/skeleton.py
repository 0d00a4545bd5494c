"""`stele-bench new suite DIR --repo PATH --commit SHA`: a suite skeleton whose every pin is already right.

    DIR/suite.json                      the manifest: the project at its commit, the fixture, one challenge
    DIR/project.bundle                  the commit and its tree, taken from the repository (no checkout, no history)
    DIR/fixture/fixture.json            evidence corpus, one graph arm ("notes"), one full-text probe, a phrase
    DIR/fixture/evidence/notes/...      a first evidence note
    DIR/fixture/graphs/notes.json       an empty graph
    DIR/first-challenge/challenge.json  the question (a prompt to write), its outputs and limits
    DIR/first-challenge/verify.py       the verifier template: rejects every tree until written
    DIR/first-challenge/oracle.py       the oracle template: changes nothing until written
    DIR/first-challenge/policy.json     the stand-in model of policy mode: answers "done" until rules are added
    DIR/provisioner.py                  a template memory system that `stele-bench provision` drives by hand
    DIR/README.md                       what to write, in order

Every JSON document is built from its contract's fields and validated before anything is written, so the
skeleton is readable by `open_suite` as it stands.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..contracts.checked_files import resolved
from ..errors import ContractError, SourceError
from ..packaging.commit_bundle import write_commit_bundle
from ..provision.code import code_pin
from ..provision.fixture import artifact_sha256, load_fixture
from ..suite.memory_system import MemorySystem
from ..suite.suite import SUITE_FILE, open_suite
from . import templates

__all__ = ["CHALLENGE", "GRAPH_ARM", "new_suite"]

CHALLENGE = "first-challenge"
GRAPH_ARM = "notes"
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_MODEL = "claude-sonnet-4-5"
# The template memory system: provisioner.py restores the evidence into one notes file, mounted into the treatment
# container, and a prompt hook hands it to the model. A real system replaces all three (see suite.json's schema).
_NOTES = "/opt/notes/notes.txt"
_HOOK = (
    "python3 -c \"import json; print(json.dumps({'hookSpecificOutput': {'hookEventName': 'UserPromptSubmit', "
    f"'additionalContext': open('{_NOTES}').read()}}}}))\""
)
_MEMORY_SYSTEM: dict[str, Any] = {
    "name": "template",
    "version": "0.1",
    "provisioner": ["./provisioner.py"],
    "attachment": {
        "settings": {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": _HOOK}]}]}},
        "mounts": [{"location": "notes", "target": _NOTES}],
    },
}


def _write_json(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _write(path: Path, text: str, executable: bool = False) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if executable:
        path.chmod(0o755)
    return artifact_sha256(path)


def _name(value: str, what: str, option: str) -> str:
    if not _NAME.fullmatch(value):
        raise ContractError(
            f"{what} {value!r} is not a name a suite can use (lowercase letters, digits, . _ -, at most 64)",
            field=option,
            actual=value,
            hint=f"pass {option} with such a name",
        )
    return value


def _challenge(directory: Path) -> dict[str, Any]:
    verifier = _write(directory / "verify.py", templates.VERIFIER)
    oracle = _write(directory / "oracle.py", templates.ORACLE)
    return {
        "kind": "challenge",
        "schema_version": 1,
        "challenge_id": directory.name,
        "prompt": templates.PROMPT,
        "allowed_output_paths": ["ANSWER.md"],
        "agent_timeout_seconds": 300,
        "environment": {"network_mode": "model-only", "cpus": 1, "memory_mb": 1024},
        "verifier": {
            "kind": "script",
            "runtime": "python3",
            "asset": {"path": "verify.py", "sha256": verifier},
            "timeout_seconds": 60,
        },
        "oracle": {"runtime": "python3", "asset": {"path": "oracle.py", "sha256": oracle}, "timeout_seconds": 60},
    }


def _policy(directory: Path) -> str:
    policy = {
        "kind": "model-policy",
        "schema_version": 1,
        "rules": [],
        "default": [{"type": "text", "text": "Done."}],
    }
    _write_json(directory / "policy.json", policy)
    return artifact_sha256(directory / "policy.json")


def _fixture(root: Path, fixture_id: str) -> None:
    _write(root / "evidence" / "notes" / "project-knowledge.md", templates.EVIDENCE_NOTE)
    _write_json(root / "graphs" / f"{GRAPH_ARM}.json", {"nodes": [], "edges": []})
    manifest = {
        "kind": "fixture",
        "schema_version": 1,
        "fixture_id": fixture_id,
        "evidence_corpus": {"path": "evidence", "sha256": artifact_sha256(root / "evidence")},
        "graph_arms": [
            {
                "name": GRAPH_ARM,
                "graph": {
                    "path": f"graphs/{GRAPH_ARM}.json",
                    "sha256": artifact_sha256(root / "graphs" / "notes.json"),
                },
            }
        ],
        "probes": [
            {
                "name": "team-knowledge",
                "kind": "full-text",
                "query": "what the team knows about this project",
                "top_k": 3,
                "expected": ["notes/project-knowledge.md"],
            }
        ],
        "memory_phrases": ["what the project's people know"],
    }
    _write_json(root / "fixture.json", manifest)
    load_fixture(root)


def _code_pin(directory: Path) -> str | None:
    """The template system's code pin, once its provisioner is written."""
    return code_pin(MemorySystem.model_validate(_MEMORY_SYSTEM, strict=False), directory)


def new_suite(directory: Path, repository: Path, commit: str, name: str | None = None) -> list[Path]:
    """Write the skeleton into ``directory`` (which must not exist, or be empty); returns the files written."""
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ContractError(f"{directory} already exists and is not an empty directory", path=str(directory))
    suite_id = _name(resolved(directory, "the suite directory").name, "the directory name", "DIR")
    repository_name = resolved(repository, "the repository", error=SourceError).name.lower()
    label = _name(name if name is not None else repository_name, "the repository name", "--name")
    directory.mkdir(parents=True, exist_ok=True)
    pinned = write_commit_bundle(str(repository), commit, directory / "project.bundle")
    challenge = directory / CHALLENGE
    _write_json(challenge / "challenge.json", _challenge(challenge))
    policy = _policy(challenge)
    _fixture(directory / "fixture", f"{suite_id}-notes")
    _write(directory / "provisioner.py", templates.PROVISIONER, executable=True)
    _write(directory / "README.md", templates.README.format(suite_id=suite_id, commit=pinned, directory=directory))
    suite = {
        "kind": "suite",
        "schema_version": 2,
        "suite_id": suite_id,
        "project": {"bundle": "project.bundle", "commit": pinned, "repository": label},
        "fixture": {"path": "fixture", "graph_arm": GRAPH_ARM},
        "challenges": [
            {
                "directory": CHALLENGE,
                "category": "investigation",
                "policy": {"path": "policy.json", "sha256": policy},
            }
        ],
        "memory_systems": [{**_MEMORY_SYSTEM, "code_sha256": _code_pin(directory)}],
        "attempts": 2,
        "model": _MODEL,
        "gateway_mode": "policy",
    }
    _write_json(directory / SUITE_FILE, suite)
    open_suite(directory)  # the skeleton reads as a suite, pins and all
    return sorted(path for path in directory.rglob("*") if path.is_file())
