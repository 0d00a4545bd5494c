"""What an arm's attachment mounts, named by digest, and the pass-through a declaration does not cover refused.

Each mount of an arm's attachment (its harness configuration files, and every restore location its system's
declaration mounts) is recorded with the digest of its bytes as the container starts: a file's bytes or a
directory's tree, stored. A mount may overlay any path of the pinned image, so the spec (and with it the arm record,
the spec-diff receipt and every key downstream) names what was mounted, not only where it came from.

A restore location inside the suite directory passes the suite's own files straight into the container. That is
refused unless the files are declared code (their bytes are keyed: :mod:`bench.provision.code`) mounted read-only:
an undeclared one would reach the agent unkeyed, and a writable one would let the agent write through into the
suite, the next run's provisioner included.

A restore response is recorded with the attempt and published with it, so what publication would refuse in it (a
restore location under a home directory or a runner's scratch folder, a secret) is refused as restore answers,
before any arm runs, by the publication's own patterns (:func:`bench.publish.checks.check_leaks`).
"""

from __future__ import annotations

from pathlib import Path

from ..contracts import Digest
from ..errors import ContractError
from ..provision.messages import RestoreResponse
from ..sandbox.spec import MemoryAttachment
from ..store import Store, tree_from_directory
from ..suite.memory_system import MemorySystem
from .attachment import restore_location

__all__ = ["record_mounts", "require_declared", "require_publishable"]


def _mounted(store: Store, source: Path) -> Digest:
    return tree_from_directory(store, source) if source.is_dir() else store.put_bytes(source.read_bytes())


def require_declared(system: MemorySystem, restored: RestoreResponse, suite_root: Path) -> None:
    """Refuse a restore location of ``system`` that passes suite files through unless they are declared code mounted
    read-only: the arm mounts a copy, but a writable location gets the arm's writes back (``return_writes``)."""
    root = suite_root.resolve()
    declared = [(root / path).resolve() for path in system.code]
    for mount in system.attachment.mounts:
        source = restore_location(system, restored, mount.location).resolve()
        if not source.is_relative_to(root):
            continue
        covered = any(source == path or source.is_relative_to(path) for path in declared)
        if covered and not mount.writable:
            continue
        why = "writable, so the agent could write through into the suite" if covered else "not declared as its code"
        raise ContractError(
            f"memory system {system.name!r} mounts {source} at {mount.target}: a path of the suite directory, {why}",
            path=str(source),
            field="code",
            hint="restore a copy into the provisioner's own directory, or declare the path in `code` and mount it "
            "read-only",
        )


def require_publishable(system: MemorySystem, restored: RestoreResponse) -> None:
    """Refuse ``system``'s restore response when publication would refuse it: now, not after the arms ran."""
    # imported here: publish sits above agent in the layering (ARCHITECTURE.md), whose package imports this
    from ..publish.checks import check_leaks

    paths = restored.locations.paths if restored.locations is not None else {}
    places = [(f"restore location {name!r} ({path})", path) for name, path in sorted(paths.items())]
    for place, text in [*places, ("restore response", restored.model_dump_json())]:
        findings = check_leaks(place, text.encode())
        if findings:
            raise ContractError(
                f"memory system {system.name!r}: its {place} would be refused at publication: {findings[0].detail}",
                field="locations",
                actual=[finding.detail for finding in findings],
                hint="restore into a directory the provisioner owns outside any home directory (a temporary "
                "directory): the restore response is recorded and published",
            )


def record_mounts(store: Store, attachment: MemoryAttachment) -> MemoryAttachment:
    """``attachment`` with each mount's digest: the bytes the engine binds."""
    mounts = [mount.model_copy(update={"digest": _mounted(store, Path(mount.bound))}) for mount in attachment.mounts]
    return attachment.model_copy(update={"mounts": tuple(mounts)})
