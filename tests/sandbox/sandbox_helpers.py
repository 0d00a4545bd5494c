"""Helpers shared by the sandbox tests: trees from literals and challenge directories on disk."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

from bench.contracts import Digest, PortablePath
from bench.store import EntryKind, FileEntry, Store, tree_from_entries

__all__ = ["make_tree", "write_challenge"]

# A path's value: bytes for a file, ("x", bytes) for an executable, ("l", target) for a symlink.
Spec = bytes | tuple[str, bytes | str]


def make_tree(store: Store, files: Mapping[str, Spec]) -> Digest:
    entries = []
    for path, value in files.items():
        if isinstance(value, bytes):
            entries.append(FileEntry(PortablePath(path), EntryKind.FILE, value))
        elif value[0] == "x":
            entries.append(FileEntry(PortablePath(path), EntryKind.EXECUTABLE, bytes(value[1])))  # type: ignore[arg-type]
        else:
            entries.append(FileEntry(PortablePath(path), EntryKind.SYMLINK, str(value[1]).encode()))
    return tree_from_entries(store, entries)


def write_challenge(directory: Path, verifier: str, *, oracle: str | None = None, **fields: object) -> Path:
    """A challenge directory with a posix-shell verifier (and oracle) pinned by their real SHA-256."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "verify.sh").write_text(verifier)
    manifest: dict[str, object] = {
        "schema_version": 1,
        "challenge_id": "greeting",
        "prompt": "Make hello.txt say hello, world.",
        "allowed_output_paths": ["hello.txt"],
        "agent_timeout_seconds": 60,
        "environment": {"network_mode": "none", "cpus": 1, "memory_mb": 256, "prebuild_argv": []},
        "verifier": {
            "kind": "script",
            "runtime": "posix-shell",
            "asset": {"path": "verify.sh", "sha256": hashlib.sha256(verifier.encode()).hexdigest()},
            "timeout_seconds": 30,
        },
    }
    if oracle is not None:
        (directory / "solve.sh").write_text(oracle)
        sha = hashlib.sha256(oracle.encode()).hexdigest()
        manifest["oracle"] = {"runtime": "posix-shell", "asset": {"path": "solve.sh", "sha256": sha}}
    manifest.update(fields)
    (directory / "challenge.json").write_text(json.dumps(manifest))
    return directory
