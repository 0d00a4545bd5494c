"""The runner's own copy of a memory's restored state: taken before the arm ran, kept in the store, never mounted.

What the memory supplied is re-derived from this copy, never from the live state the agent could reach: a
writable mount can be planted in, and even a read-only one is only as good as what restore left. So before the
arms run, every location a system mounts is copied into the store as a tree (:class:`StateCopy`, by its mount
target); after them, again, and what differs is what the agent wrote into the memory (attributed to the agent, never
to the system). A read-only location that changed anyway is a finding.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from ..contracts import ContractModel, Digest, PortablePath
from ..errors import ContractError
from ..provision.messages import RestoreResponse
from ..store import EntryKind, FileEntry, Store, export_tree, tree_from_directory, tree_from_entries, walk_tree
from ..suite.memory_system import MemorySystem

__all__ = ["StateCopy", "copy_state", "export_state", "state_files", "state_writes"]


class StateCopy(ContractModel):
    """One mounted location as the runner copied it: a directory's contents, or one file named as its target."""

    target: str  # where the arm saw it
    tree: Digest
    file: bool  # the location is one file (the tree holds it alone, under the target's name)
    writable: bool


def copy_state(store: Store, system: MemorySystem, restored: RestoreResponse) -> tuple[StateCopy, ...]:
    """Every location ``system`` mounts, as it is now, into the store."""
    paths = restored.locations.paths if restored.locations is not None else {}
    copies = []
    for mount in system.attachment.mounts:
        if mount.location not in paths:
            raise ContractError(f"memory system {system.name!r}: no restore location {mount.location!r} to copy")
        source = Path(paths[mount.location])
        if source.is_dir():
            tree = tree_from_directory(store, source)
        else:
            name = PortablePath(PurePosixPath(mount.target).name)
            tree = tree_from_entries(store, [FileEntry(path=name, kind=EntryKind.FILE, data=source.read_bytes())])
        copies.append(StateCopy(target=mount.target, tree=tree, file=not source.is_dir(), writable=mount.writable))
    return tuple(copies)


def state_files(store: Store, copies: Sequence[StateCopy]) -> dict[str, bytes]:
    """Every file of the copies by the path the arm saw it at."""
    files: dict[str, bytes] = {}
    for copy in copies:
        entries = [
            (path, entry) for path, entry in walk_tree(store, copy.tree) if entry.kind is not EntryKind.DIRECTORY
        ]
        for path, entry in entries:
            where = copy.target if copy.file else f"{copy.target.rstrip('/')}/{path}"
            files[where] = store.get_bytes(entry.digest)
    return files


def state_writes(store: Store, before: Sequence[StateCopy], after: Sequence[StateCopy]) -> dict[str, tuple[str, ...]]:
    """Per mount target whose copy changed, the files added, changed or removed (``writable`` or not)."""
    old, new = state_files(store, before), state_files(store, after)
    changed: dict[str, list[str]] = {}
    for path in sorted(old.keys() | new.keys()):
        if old.get(path) != new.get(path):
            target = next(c.target for c in (*before, *after) if path == c.target or path.startswith(c.target + "/"))
            changed.setdefault(target, []).append(path)
    return {target: tuple(paths) for target, paths in changed.items()}


def export_state(store: Store, copy: StateCopy, destination: Path) -> Path:
    """Write ``copy`` under ``destination`` (a new directory); returns the path to mount at its target."""
    export_tree(store, copy.tree, destination)
    return destination / PurePosixPath(copy.target).name if copy.file else destination
