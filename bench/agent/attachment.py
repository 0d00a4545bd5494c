"""Every arm's attachment: the user-level harness configuration the runner owns, and a treatment's memory.

The user-level configuration is where an agent could install a memory channel of its own (a hook, an MCP server,
notes in its instructions file, a skill), which its harness would load on the next step. So in every arm, the
control's included, the harness's configuration files (:meth:`~bench.harness.base.Harness.render`) are runner-owned
read-only mounts of the same shape: the system's declared channels, or none. Nothing there is the agent's to write,
and nothing tells one arm from another but the memory itself. A system's servers and hooks start with the
environment its declaration names and none of the arm's model credentials (:mod:`bench.harness.sealing`).

The runner learns no system's schema: it writes the files the harness renders into a runner-owned staging
directory, mounts a copy of every declared restore location at its target (named in hex: a mount's source shows in
the container's mount table, and a provisioner's paths name it), copies a writable one's contents back after the
arm (:func:`return_writes`), and starts the container from the system's image when it declares a layer. The mounted
copies are made readable (writable, where declared) by the container's non-root user.
"""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path

from ..errors import ContractError
from ..harness import AttachmentRequest, Harness
from ..provision.messages import RestoreResponse
from ..sandbox.spec import MemoryAttachment, Mount
from ..suite.memory_system import MemorySystem
from .harness_files import managed_mounts, staged_mount
from .sealed_env import attachment_request

__all__ = ["control_attachment", "restore_location", "return_writes", "treatment_attachment"]


def _grant(path: Path, writable: bool) -> None:
    """Let the container's user (not the host user who owns ``path``) read it, or also write it."""
    file_mode, dir_mode = (0o666, 0o777) if writable else (0o644, 0o755)
    if path.is_dir():
        for directory, _, files in os.walk(path):
            Path(directory).chmod(dir_mode)
            for name in files:
                (Path(directory) / name).chmod(file_mode)
    else:
        path.chmod(file_mode)


def restore_location(system: MemorySystem, restored: RestoreResponse, name: str) -> Path:
    paths = restored.locations.paths if restored.locations is not None else {}
    if name not in paths:
        raise ContractError(
            f"memory system {system.name!r} mounts restore location {name!r}, but its restore reported "
            f"{sorted(paths) or 'no locations'}; report it in the restore response's `locations.paths`",
            field="locations",
            expected=name,
            actual=sorted(paths),
        )
    path = Path(paths[name])
    if not path.exists():
        raise ContractError(f"memory system {system.name!r}: restore location {name!r} = {path} does not exist")
    return path


def _user_config(harness: Harness, staging: Path, request: AttachmentRequest, taken: set[str]) -> list[Mount]:
    """The user-level configuration every arm gets, read-only, from ``request`` (the control's: no channel); the
    paths a declared state mount takes (``taken``) are left to it."""
    staging.chmod(0o755)
    mounts = [staged_mount(staging, file) for file in harness.render(request).files]
    return [mount for mount in mounts if mount.target not in taken]


def control_attachment(harness: Harness, staging: Path) -> MemoryAttachment:
    """The control arm's attachment: the user-level configuration alone, with no memory in it."""
    return MemoryAttachment(mounts=tuple(_user_config(harness, staging, attachment_request(None), set())))


def treatment_attachment(
    harness: Harness, system: MemorySystem, restored: RestoreResponse, staging: Path, image_id: str | None
) -> MemoryAttachment:
    """The attachment of ``system``'s arm: its configuration files (written to ``staging``) and restored state."""
    declared = system.attachment
    request = attachment_request(declared)
    mounts = _user_config(harness, staging, request, {mount.target for mount in declared.mounts})
    if harness.builtin_memory(request):
        # The managed layer outranks the user's, so the system's own switch is lifted into it.
        mounts += managed_mounts(harness, builtin_memory=True)
    for mount in declared.mounts:
        staged = _neutral_copy(restore_location(system, restored, mount.location), staging / secrets.token_hex(8))
        _grant(staged, mount.writable)
        name = f"restore:{system.name}/{mount.location}"  # the provisioner's per-run path is this machine's
        mounts.append(Mount.of(staged, name, mount.target, read_only=not mount.writable))
    return MemoryAttachment(mounts=tuple(mounts), image_id=image_id)


def _neutral_copy(source: Path, staged: Path) -> Path:
    """``source`` copied to ``staged``: a mount's source shows in the container's mount table, and a provisioner's
    own paths name it (or what it is); the copy's name is hex."""
    if source.is_dir():
        shutil.copytree(source, staged, symlinks=True)
    else:
        shutil.copy2(source, staged)
    return staged


def return_writes(system: MemorySystem, restored: RestoreResponse, attachment: MemoryAttachment) -> None:
    """Copy what the arm left in each of ``system``'s writable mounts back to the location restore reported, so the
    system's snapshot reads the memory as the arm left it."""
    sources = {mount.target: Path(mount.bound) for mount in attachment.mounts}
    for mount in system.attachment.mounts:
        if not mount.writable:
            continue
        location, staged = restore_location(system, restored, mount.location), sources[mount.target]
        if location.is_dir():
            for child in location.iterdir():
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
            shutil.copytree(staged, location, symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copy2(staged, location)
