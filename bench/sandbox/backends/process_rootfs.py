"""The directory tree of a process backend root, made before its first command and removed after its last.

What the launcher (:mod:`.launch`) binds into it is laid out here as empty mount points: the host's program
directories, device nodes, ``/proc``, ``/sys`` and the spec's mounts; beside them an ``/etc`` naming the agent
user, ``/tmp``, and the agent user's home and workspace owned by that user.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePosixPath

from ...errors import SandboxError
from ..layout import USER_GID, USER_HOME, USER_NAME, USER_UID, WORKSPACE
from ..spec import ContainerSpec
from . import launch

__all__ = ["SYSTEM", "make_root", "remove_root"]

# Host directories bound read-only into every root (a symlink on the host is a symlink in the root).
SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
# Host files copied into the root's /etc: what the dynamic linker and name lookups read.
_ETC = ("ld.so.cache", "nsswitch.conf", "resolv.conf", "host.conf")


def make_root(path: Path, spec: ContainerSpec, home_dirs: tuple[PurePosixPath, ...]) -> None:
    """The directory tree the launcher binds into: see the module docstring."""
    path.mkdir(mode=0o755)
    for name in SYSTEM:
        host = Path("/") / name
        if host.is_symlink():
            (path / name).symlink_to(os.readlink(host))
        elif host.is_dir():
            (path / name).mkdir()
    etc = path / "etc"
    etc.mkdir()
    passwd = f"root:x:0:0:root:/root:/bin/sh\n{USER_NAME}:x:{USER_UID}:{USER_GID}::{USER_HOME}:/bin/sh\n"
    (etc / "passwd").write_text(passwd)
    (etc / "group").write_text(f"root:x:0:\n{USER_NAME}:x:{USER_GID}:\n")
    (etc / "hostname").write_text(f"{spec.hostname}\n")
    (etc / "hosts").write_text(f"127.0.0.1\tlocalhost\n127.0.1.1\t{spec.hostname}\n")
    for name in _ETC:
        if (Path("/etc") / name).is_file():
            shutil.copyfile(Path("/etc") / name, etc / name)
    for name in ("proc", "sys", "dev", "root"):
        (path / name).mkdir(mode=0o755)
    (path / "tmp").mkdir()
    (path / "tmp").chmod(0o1777)
    for device in launch.DEVICES:
        (path / "dev" / device).touch()
    for name, link in (("fd", "fd"), ("stdin", "fd/0"), ("stdout", "fd/1"), ("stderr", "fd/2")):
        (path / "dev" / name).symlink_to(f"/proc/self/{link}")
    for owned in (PurePosixPath(USER_HOME), PurePosixPath(WORKSPACE), *home_dirs):
        directory = path / str(owned).lstrip("/")
        directory.mkdir(mode=0o755, parents=True, exist_ok=True)
        os.chown(directory, USER_UID, USER_GID)
    for mount in spec.effective_mounts():
        target = path / mount.target.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        if Path(mount.bound).is_dir():
            target.mkdir(exist_ok=True)
        else:
            target.touch()


def remove_root(path: Path) -> None:
    """Remove a root; refuse if anything inside is mounted here (the launcher's mounts are never seen outside)."""
    for name in (*SYSTEM, "proc", "sys", "dev"):
        if os.path.ismount(path / name):
            raise SandboxError(f"{path / name} is a mount point in the runner's namespace; refusing to delete it")
    shutil.rmtree(path, ignore_errors=True)
    if path.exists():
        raise SandboxError(f"cannot remove the root {path}; remove it by hand")
