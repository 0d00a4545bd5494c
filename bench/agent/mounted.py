"""What an arm's attachment mounts, named by digest, and the pass-through a declaration does not cover refused.

Each mount of an arm's attachment (its harness configuration files, and every restore location its system's
declaration mounts) is recorded with the digest of its bytes as the container starts: a file's bytes or a
directory's tree, stored. A mount may overlay any path of the pinned image, so the spec (and with it the arm record,
the spec-diff receipt and every key downstream) names what was mounted, not only where it came from.

A restore location inside the suite directory passes the suite's own files straight into the container. That is
refused unless the files are declared code (their bytes are keyed: :mod:`bench.provision.code`) mounted read-only:
an undeclared one would reach the agent unkeyed, and a writable one would let the agent write through into the
suite, the next run's provisioner included.
"""

from __future__ import annotations

from pathlib import Path

from ..contracts import Digest
from ..errors import ContractError
from ..sandbox.spec import MemoryAttachment, Mount
from ..store import Store, tree_from_directory
from ..suite.memory_system import MemorySystem

__all__ = ["record_mounts"]


def _mounted(store: Store, source: Path) -> Digest:
    return tree_from_directory(store, source) if source.is_dir() else store.put_bytes(source.read_bytes())


def _require_declared(system: MemorySystem, mount: Mount, source: Path, suite_root: Path) -> None:
    """Refuse a mount that passes suite files through unless they are declared code, mounted read-only."""
    root = suite_root.resolve()
    if not source.is_relative_to(root):
        return
    declared = [(root / path).resolve() for path in system.code]
    covered = any(source == path or source.is_relative_to(path) for path in declared)
    if covered and mount.read_only:
        return
    why = "writable, so the agent could write through into the suite" if covered else "not declared as its code"
    raise ContractError(
        f"memory system {system.name!r} mounts {source} at {mount.target}: a path of the suite directory, {why}",
        path=str(source),
        field="code",
        hint="restore a copy into the provisioner's own directory, or declare the path in `code` and mount it "
        "read-only",
    )


def record_mounts(
    store: Store, attachment: MemoryAttachment, system: MemorySystem | None, suite_root: Path
) -> MemoryAttachment:
    """``attachment`` with each mount's digest; ``system`` is the treatment's (None for the control)."""
    mounts: list[Mount] = []
    for mount in attachment.mounts:
        source = Path(mount.bound).resolve()
        if system is not None:
            _require_declared(system, mount, source, suite_root)
        mounts.append(mount.model_copy(update={"digest": _mounted(store, source)}))
    return attachment.model_copy(update={"mounts": tuple(mounts)})
