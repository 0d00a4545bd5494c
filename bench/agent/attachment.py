"""A treatment arm's attachment, made from its memory system's declaration and what its restore reported.

The runner learns no system's schema: it writes the two Claude Code configuration files the declaration gives
(the agent user's ``~/.claude/settings.json``, an empty object when the system declares none, as in the control
arm, and the user-level MCP configuration ``~/.claude.json``) into a runner-owned staging directory, mounts each
read-only, mounts every declared restore location at its target, and
starts the container from the system's image when it declares a layer. Mounted restore locations are made readable
(writable, where declared) by the container's non-root user; the provisioner's own files keep their content.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import ContractError
from ..provision.messages import RestoreResponse
from ..sandbox.layout import USER_HOME
from ..sandbox.spec import MemoryAttachment, Mount, runner_name
from ..suite.memory_system import MemorySystem
from .claude import AUTO_MEMORY, managed_settings_mount

__all__ = ["MCP_CONFIG_PATH", "SETTINGS_PATH", "control_attachment", "treatment_attachment"]

SETTINGS_PATH = PurePosixPath(USER_HOME) / ".claude" / "settings.json"
MCP_CONFIG_PATH = PurePosixPath(USER_HOME) / ".claude.json"


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


def _location(system: MemorySystem, restored: RestoreResponse, name: str) -> Path:
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


def _settings(staging: Path, declared: dict[str, Any] | None) -> Mount:
    """Every arm's harness settings file, read-only: the system's declared settings, or an empty object. An agent
    therefore cannot write hooks of its own there (the control arm's would otherwise load on a ``--resume`` step)."""
    staging.chmod(0o755)
    return _write(staging, "settings.json", dict(declared or {}), SETTINGS_PATH)


def control_attachment(staging: Path) -> MemoryAttachment:
    """The control arm's attachment: only its harness settings, an empty read-only file."""
    return MemoryAttachment(mounts=(_settings(staging, None),))


def treatment_attachment(
    system: MemorySystem, restored: RestoreResponse, staging: Path, image_id: str | None
) -> MemoryAttachment:
    """The attachment of ``system``'s arm: its configuration files (written to ``staging``) and restored state."""
    declared = system.attachment
    mounts = [_settings(staging, declared.settings)]
    if declared.mcp_servers:
        servers = {
            name: {"type": "stdio", "command": server.command, "args": list(server.args), "env": dict(server.env)}
            for name, server in sorted(declared.mcp_servers.items())
        }
        mounts.append(_write(staging, "mcp.json", {"mcpServers": servers}, MCP_CONFIG_PATH))
    if declared.settings is not None and declared.settings.get(AUTO_MEMORY) is True:
        # Managed settings outrank the user settings file, so the system's own switch is lifted into them.
        mounts.append(managed_settings_mount({AUTO_MEMORY: True}))
    for mount in declared.mounts:
        source = _location(system, restored, mount.location)
        _grant(source, mount.writable)
        name = f"restore:{system.name}/{mount.location}"  # the provisioner's per-run path is this machine's
        mounts.append(Mount.of(source, name, mount.target, read_only=not mount.writable))
    return MemoryAttachment(mounts=tuple(mounts), image_id=image_id)
