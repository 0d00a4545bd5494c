"""The harness's files on the runner's side: its configuration written to staging and mounted, its endpoint.

The harness says what its files are (:meth:`bench.harness.base.Harness.render`, ``managed_files``); this module
writes them and names them as mounts. Paths a harness gives relative to the home are the agent user's.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path, PurePosixPath

from ..harness import ConfigFile, Harness
from ..sandbox.layout import GATEWAY_ALIAS, RELAY_PORT, RUNNER_SCRATCH, USER_HOME
from ..sandbox.spec import Mount, runner_name

__all__ = ["base_url", "container_path", "home_dirs", "managed_mounts", "staged_mount"]


def base_url() -> str:
    """What the agent is told the model endpoint is: the relay on its model-only network, the same in every arm."""
    return f"http://{GATEWAY_ALIAS}:{RELAY_PORT}"


def container_path(path: PurePosixPath) -> PurePosixPath:
    """A harness path in the container: relative ones are under the agent user's home."""
    return PurePosixPath(USER_HOME) / path


def home_dirs(harness: Harness) -> tuple[PurePosixPath, ...]:
    """The directories the runner creates agent-owned before ``harness``'s container starts."""
    return tuple(container_path(path) for path in harness.home)


def staged_mount(staging: Path, file: ConfigFile) -> Mount:
    """``file`` written into ``staging`` (an empty directory, for a directory), mounted read-only at its target and
    recorded by its portable name."""
    path = staging / file.name
    if file.directory:
        path.mkdir(mode=0o755, exist_ok=True)
    else:
        path.write_bytes(file.content)
        path.chmod(0o644)
    return Mount.of(path, runner_name(file.name, file.content), str(container_path(file.target)))


def managed_mounts(harness: Harness, builtin_memory: bool = False) -> tuple[Mount, ...]:
    """Read-only mounts of ``harness``'s managed configuration.

    Each host file is named by its content's digest, written once and shared by every arm that gets the same
    settings; its name is hex because it shows in the container's mount table.
    """
    mounts: list[Mount] = []
    for file in harness.managed_files(builtin_memory):
        data = file.content
        directory = Path(tempfile.gettempdir()) / f"{RUNNER_SCRATCH['staging']}{hashlib.sha256(data).hexdigest()[:16]}"
        path = directory / file.name
        if not path.is_file() or path.read_bytes() != data:
            directory.mkdir(mode=0o755, exist_ok=True)
            staged = directory / f".{os.getpid()}.tmp"
            staged.write_bytes(data)
            staged.chmod(0o644)
            staged.replace(path)  # atomic: a concurrent arm reads the old complete file or the new one
        mounts.append(Mount.of(path, runner_name(file.name, data), str(container_path(file.target))))
    return tuple(mounts)
