"""`stele-bench pin SUITE_DIR [--check]`: set every SHA-256 pin of a suite to its file's current bytes.

Pins: each challenge's verifier and oracle (``challenge.json``), each challenge's policy and each memory system's
own code (``suite.json``: the provisioner when it lies in the suite and the declared code paths,
:func:`bench.provision.code.code_pin`), the evidence corpus and every graph arm (``fixture/fixture.json``). The
project commit is not a digest of a file here and is left as written. A pin guards against a file changing
unnoticed after it was preregistered; re-pinning is the step after an edit made on purpose, before `prereg freeze`
(or a corrected preregistration). A memory system's code is the build under test, not frozen: its pin only says
that a change was meant, and the keys name its bytes whatever the pin says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..contracts.strict_json import read_json_object
from ..provision.code import code_pin
from ..provision.fixture import FIXTURE_FILE, artifact_sha256, load_fixture
from ..suite.challenge import load_challenge
from ..suite.suite import SUITE_FILE, load_suite

__all__ = ["Pin", "pin_suite"]

_CHALLENGE_FILE = "challenge.json"


@dataclass(frozen=True)
class Pin:
    document: Path
    field: str
    old: str
    new: str

    def __str__(self) -> str:
        return f"{self.document} {self.field}: {self.old[:12]} -> {self.new[:12]}"


def _repin(document: Path, pins: list[tuple[tuple[Any, ...], Path | str | None]], write: bool) -> list[Pin]:
    """Set each pin to its source's SHA-256 (a Path) or to the value given (None: no pin)."""
    data = read_json_object(document, "a pinned document")
    changed = []
    for keys, source in pins:
        holder: Any = data
        for key in keys[:-1]:
            holder = holder[key]
        new = artifact_sha256(source) if isinstance(source, Path) else source
        if holder.get(keys[-1]) != new:
            changed.append(Pin(document, ".".join(str(key) for key in keys), str(holder.get(keys[-1])), str(new)))
            holder[keys[-1]] = new
    if changed and write:
        document.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return changed


def _challenge_pins(directory: Path) -> list[tuple[tuple[Any, ...], Path | str | None]]:
    manifest = load_challenge(directory)  # shape checked through the contract; only digests may be stale
    pins: list[tuple[tuple[Any, ...], Path | str | None]] = [
        (("verifier", "asset", "sha256"), directory / manifest.verifier.asset.path)
    ]
    if manifest.oracle is not None:
        pins.append((("oracle", "asset", "sha256"), directory / manifest.oracle.asset.path))
    return pins


def pin_suite(root: Path, write: bool = True) -> list[Pin]:
    """Re-pin the suite at ``root``; returns every pin that was (or, without ``write``, would be) changed."""
    manifest = load_suite(root)  # the suite's shape is checked first; only the digests may be stale
    changed: list[Pin] = []
    fixture_root = root / manifest.fixture.path
    fixture = load_fixture(fixture_root)
    fixture_pins: list[tuple[tuple[Any, ...], Path | str | None]] = [
        (("evidence_corpus", "sha256"), fixture_root / fixture.evidence_corpus.path)
    ]
    fixture_pins += [
        (("graph_arms", index, "graph", "sha256"), fixture_root / arm.graph.path)
        for index, arm in enumerate(fixture.graph_arms)
    ]
    changed += _repin(fixture_root / FIXTURE_FILE, fixture_pins, write)
    suite_pins: list[tuple[tuple[Any, ...], Path | str | None]] = []
    for index, challenge in enumerate(manifest.challenges):
        directory = root / challenge.directory
        changed += _repin(directory / _CHALLENGE_FILE, _challenge_pins(directory), write)
        if challenge.policy is not None:
            suite_pins.append((("challenges", index, "policy", "sha256"), directory / challenge.policy.path))
    for index, system in enumerate(manifest.memory_systems):
        suite_pins.append((("memory_systems", index, "code_sha256"), code_pin(system, root)))
    changed += _repin(root / SUITE_FILE, suite_pins, write)
    return changed
