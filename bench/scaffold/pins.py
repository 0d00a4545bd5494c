"""`stele-bench pin SUITE_DIR [--check]`: set every SHA-256 pin of a suite to its file's current bytes.

Pins: each challenge's verifier and oracle (``challenge.json``), each challenge's policy and each memory system's
own code (``suite.json``: the provisioner when it lies in the suite and the declared code paths,
:func:`bench.provision.code.code_pin`), the evidence corpus and every graph arm (``fixture/fixture.json``). The
project commit is not a digest of a file here and is left as written. A pin guards against a file changing
unnoticed after it was preregistered; re-pinning is the step after an edit made on purpose, before `prereg freeze`
(or a corrected preregistration). A memory system's code is the build under test, not frozen: its pin only says
that a change was meant, and the keys name its bytes whatever the pin says.

Every pin is computed before any document is written, and each is then replaced whole (a temporary file renamed
over it): a pin that cannot be computed (a missing file, a refused one) leaves every document as it was.
"""

from __future__ import annotations

import json
import os
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


_Pins = list[tuple[tuple[Any, ...], Path | str | None]]


def _repin(document: Path, pins: _Pins) -> tuple[list[Pin], str | None]:
    """Set each pin to its source's SHA-256 (a Path) or to the value given (None: no pin); returns the changed pins
    and the document's new text (None: unchanged). Nothing is written."""
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
    return changed, (json.dumps(data, indent=2, ensure_ascii=False) + "\n" if changed else None)


def _replace(document: Path, text: str) -> None:
    staged = document.with_name(f".{document.name}.{os.getpid()}.tmp")
    staged.write_text(text, encoding="utf-8")
    staged.chmod(document.stat().st_mode & 0o777)
    staged.replace(document)


def _challenge_pins(directory: Path) -> _Pins:
    manifest = load_challenge(directory)  # shape checked through the contract; only digests may be stale
    pins: _Pins = [(("verifier", "asset", "sha256"), directory / manifest.verifier.asset.path)]
    if manifest.oracle is not None:
        pins.append((("oracle", "asset", "sha256"), directory / manifest.oracle.asset.path))
    return pins


def pin_suite(root: Path, write: bool = True) -> list[Pin]:
    """Re-pin the suite at ``root``; returns every pin that was (or, without ``write``, would be) changed."""
    manifest = load_suite(root)  # the suite's shape is checked first; only the digests may be stale
    fixture_root = root / manifest.fixture.path
    fixture = load_fixture(fixture_root)
    fixture_pins: _Pins = [(("evidence_corpus", "sha256"), fixture_root / fixture.evidence_corpus.path)]
    fixture_pins += [
        (("graph_arms", index, "graph", "sha256"), fixture_root / arm.graph.path)
        for index, arm in enumerate(fixture.graph_arms)
    ]
    documents: dict[Path, _Pins] = {fixture_root / FIXTURE_FILE: fixture_pins}
    suite_pins: _Pins = []
    for index, challenge in enumerate(manifest.challenges):
        directory = root / challenge.directory
        documents[directory / _CHALLENGE_FILE] = _challenge_pins(directory)
        if challenge.policy is not None:
            suite_pins.append((("challenges", index, "policy", "sha256"), directory / challenge.policy.path))
    for index, system in enumerate(manifest.memory_systems):
        suite_pins.append((("memory_systems", index, "code_sha256"), code_pin(system, root)))
    documents[root / SUITE_FILE] = suite_pins
    repinned = [(document, *_repin(document, pins)) for document, pins in documents.items()]  # all, or raise
    if write:
        for document, _, text in repinned:
            if text is not None:
                _replace(document, text)
    return [pin for _, changed, _ in repinned for pin in changed]
