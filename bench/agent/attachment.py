"""Every arm's attachment: the user-level harness configuration the runner owns, and a treatment's memory.

The user-level configuration is where an agent could install a memory channel of its own (a hook in its settings,
an MCP server in its MCP configuration, notes in its instructions file, a skill or an agent type of its own), which
its harness would load on the next step. So in every arm, the control's included, each of those is a runner-owned
read-only mount of the same shape: the agent user's ``~/.claude/settings.json`` (the system's declared settings,
or ``{"hooks": {}}``), the user-level MCP configuration ``~/.claude.json`` (the declared servers, or none), the
user-level instructions file ``~/.claude/CLAUDE.md`` (empty, unless a system mounts its state there) and the user's
``skills``, ``agents`` and ``commands`` directories (empty). Nothing there is the agent's to write, and nothing
tells one arm from another but the memory itself. A system's servers and hooks start with the environment its
declaration names and none of the arm's model credentials (:mod:`bench.agent.sealed_env`).

The runner learns no system's schema: it writes the files the declaration gives into a runner-owned staging
directory, mounts a copy of every declared restore location at its target (named in hex: a mount's source shows in
the container's mount table, and a provisioner's paths name it), copies a writable one's contents back after the
arm (:func:`return_writes`), and starts the container from the system's image when it declares a layer. The mounted
copies are made readable (writable, where declared) by the container's non-root user.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import ContractError
from ..provision.messages import RestoreResponse
from ..sandbox.layout import USER_HOME
from ..sandbox.spec import MemoryAttachment, Mount, runner_name
from ..suite.memory_system import Attachment, MemorySystem
from .claude import AUTO_MEMORY, CLAUDE_DIR, USER_MEMORY_PATH, managed_settings_mount
from .sealed_env import sealed_server, sealed_settings

__all__ = [
    "MCP_CONFIG_PATH",
    "SETTINGS_PATH",
    "USER_DIRS",
    "control_attachment",
    "restore_location",
    "return_writes",
    "treatment_attachment",
]

SETTINGS_PATH = CLAUDE_DIR / "settings.json"
MCP_CONFIG_PATH = PurePosixPath(USER_HOME) / ".claude.json"
# The user-level directories the harness loads skills, agent types and commands from: each a channel an agent
# could fill in one step for the next.
USER_DIRS = ("skills", "agents", "commands")


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


def _write(staging: Path, name: str, data: dict[str, Any], target: PurePosixPath) -> Mount:
    """A runner-written configuration file, mounted read-only at ``target`` and recorded by its portable name."""
    path = staging / name
    content = (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8")
    path.write_bytes(content)
    path.chmod(0o644)
    return Mount.of(path, runner_name(name, content), str(target))


def _user_config(staging: Path, declared: Attachment | None) -> list[Mount]:
    """The user-level configuration every arm gets, read-only, from ``declared`` (None: the control's); the paths a
    declared state mount takes are left to it."""
    staging.chmod(0o755)
    settings: dict[str, Any] = {"hooks": {}}
    if declared is not None and declared.settings is not None:
        settings = sealed_settings(declared.settings)
    servers = {
        name: sealed_server(server)
        for name, server in sorted((declared.mcp_servers if declared is not None else {}).items())
    }
    instructions = staging / "CLAUDE.md"
    instructions.write_bytes(b"")
    instructions.chmod(0o644)
    mounts = [
        _write(staging, "settings.json", settings, SETTINGS_PATH),
        _write(staging, "mcp.json", {"mcpServers": servers}, MCP_CONFIG_PATH),
        Mount.of(instructions, runner_name("CLAUDE.md", b""), str(USER_MEMORY_PATH)),
    ]
    for name in USER_DIRS:
        empty = staging / name
        empty.mkdir(mode=0o755, exist_ok=True)
        mounts.append(Mount.of(empty, runner_name(name, b""), str(CLAUDE_DIR / name)))  # an empty directory
    taken = {mount.target for mount in declared.mounts} if declared is not None else set()
    return [mount for mount in mounts if mount.target not in taken]


def control_attachment(staging: Path) -> MemoryAttachment:
    """The control arm's attachment: the user-level configuration alone, with no memory in it."""
    return MemoryAttachment(mounts=tuple(_user_config(staging, None)))


def treatment_attachment(
    system: MemorySystem, restored: RestoreResponse, staging: Path, image_id: str | None
) -> MemoryAttachment:
    """The attachment of ``system``'s arm: its configuration files (written to ``staging``) and restored state."""
    declared = system.attachment
    mounts = _user_config(staging, declared)
    if declared.settings is not None and declared.settings.get(AUTO_MEMORY) is True:
        # Managed settings outrank the user settings file, so the system's own switch is lifted into them.
        mounts.append(managed_settings_mount({AUTO_MEMORY: True}))
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
