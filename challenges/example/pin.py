"""Recompute every pin of the example suite in place: run after changing any pinned file.

Pins: each challenge's verifier and oracle (``challenge.json``), each challenge's gateway policy, each memory
system's own code and the project commit (``suite.json``, the commit read from ``project.bundle``), the evidence
corpus and graph arms (``fixture/fixture.json``). ``--check`` changes nothing and exits 1 when a pin is stale,
naming it.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # the repository root, for bench.provision's directory digest

from dulwich.bundle import read_bundle  # noqa: E402

from bench.provision.code import code_pin  # noqa: E402
from bench.provision.fixture import artifact_sha256  # noqa: E402
from bench.suite.memory_system import MemorySystem  # noqa: E402

BRANCH = b"refs/heads/main"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _bundle_commit(path: Path) -> str:
    with path.open("rb") as handle, read_bundle(handle) as bundle:
        return bundle.references[BRANCH].decode()


def _pin(document: dict[str, Any], keys: tuple[Any, ...], value: str | None, label: str, stale: list[str]) -> None:
    *parents, last = keys
    holder = document
    for key in parents:
        holder = holder[key]
    if holder.get(last) != value:
        stale.append(f"{label}: {holder.get(last)} -> {value}")
        holder[last] = value


Pins = list[tuple[tuple[Any, ...], Path | str | None, str]]


def _update(path: Path, pins: Pins, stale: list[str], write: bool) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    for keys, source, label in pins:
        value = source if not isinstance(source, Path) else _sha256(source)
        _pin(document, keys, value, f"{path.relative_to(HERE)} {label}", stale)
    if write:
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def pin(write: bool) -> list[str]:
    """Every stale pin, as ``file label: old -> new``; with ``write`` the files are updated."""
    stale: list[str] = []
    suite_path = HERE / "suite.json"
    suite = json.loads(suite_path.read_text(encoding="utf-8"))
    suite_pins: Pins = [(("project", "commit"), _bundle_commit(HERE / suite["project"]["bundle"]), "project commit")]
    for index, entry in enumerate(suite["memory_systems"]):
        pin = code_pin(MemorySystem.model_validate_json(json.dumps(entry)), HERE)
        suite_pins.append((("memory_systems", index, "code_sha256"), pin, f"memory system {entry['name']} code"))
    for index, entry in enumerate(suite["challenges"]):
        directory = HERE / entry["directory"]
        suite_pins.append(
            (("challenges", index, "policy", "sha256"), directory / entry["policy"]["path"], f"{entry['directory']}")
        )
        challenge = json.loads((directory / "challenge.json").read_text(encoding="utf-8"))
        _update(
            directory / "challenge.json",
            [
                ((part, "asset", "sha256"), directory / challenge[part]["asset"]["path"], part)
                for part in ("verifier", "oracle")
                if challenge.get(part)
            ],
            stale,
            write,
        )
    _update(suite_path, suite_pins, stale, write)
    fixture_root = HERE / suite["fixture"]["path"]
    fixture = json.loads((fixture_root / "fixture.json").read_text(encoding="utf-8"))
    fixture_pins: Pins = [
        (("evidence_corpus", "sha256"), artifact_sha256(fixture_root / fixture["evidence_corpus"]["path"]), "evidence")
    ]
    for index, arm in enumerate(fixture["graph_arms"]):
        digest = artifact_sha256(fixture_root / arm["graph"]["path"])
        fixture_pins.append((("graph_arms", index, "graph", "sha256"), digest, f"graph arm {arm['name']}"))
    _update(fixture_root / "fixture.json", fixture_pins, stale, write)
    return stale


if __name__ == "__main__":
    check = sys.argv[1:] == ["--check"]
    changes = pin(write=not check)
    for change in changes:
        print(("stale " if check else "pinned ") + change)
    sys.exit(1 if check and changes else 0)
