"""The tiny image: the host's busybox-static plus one symlink per applet, for fast tests.

The rootfs is a tar built in memory with fixed metadata, so the same busybox always gives the same bytes and the
inputs digest is simply the SHA-256 of the tar.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

from ..errors import SandboxError
from ..sandbox.layout import USER_GID, USER_HOME, USER_NAME, USER_UID, WORKSPACE

__all__ = ["BUSYBOX", "tiny_rootfs"]

BUSYBOX = Path("/bin/busybox")


def _applets(busybox: Path) -> list[str]:
    try:
        listing = subprocess.run([str(busybox), "--list-full"], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SandboxError(
            f"cannot list the applets of {busybox}: {exc}; install it with `apt-get install busybox-static`"
        ) from exc
    return sorted({line.strip() for line in listing.splitlines() if line.strip() and line.strip() != "bin/busybox"})


def _add(archive: tarfile.TarFile, name: str, kind: bytes, mode: int, data: bytes = b"", uid: int = 0) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.uid, info.gid, info.mtime = kind, mode, uid, uid, 0
    if kind == tarfile.SYMTYPE:
        info.linkname = data.decode()
        archive.addfile(info)
    else:
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def tiny_rootfs(busybox: Path = BUSYBOX) -> bytes:
    """The tiny image's rootfs as tar bytes: busybox, applet links, /tmp, a passwd with one non-root user."""
    if not busybox.is_file():
        raise SandboxError(f"{busybox} is missing; install it with `apt-get install busybox-static`")
    applets = _applets(busybox)
    passwd = f"root:x:0:0:root:/root:/bin/sh\n{USER_NAME}:x:{USER_UID}:{USER_GID}::{USER_HOME}:/bin/sh\n"
    group = f"root:x:0:\n{USER_NAME}:x:{USER_GID}:\n"
    directories = {"bin", "sbin", "usr", "usr/bin", "usr/sbin", "etc", "root", "proc", "sys", "dev", "home"}
    directories |= {str(Path(applet).parent) for applet in applets}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for directory in sorted(directories):
            _add(archive, directory, tarfile.DIRTYPE, 0o755)
        _add(archive, "tmp", tarfile.DIRTYPE, 0o1777)
        _add(archive, USER_HOME.lstrip("/"), tarfile.DIRTYPE, 0o755, uid=USER_UID)
        _add(archive, WORKSPACE.lstrip("/"), tarfile.DIRTYPE, 0o755, uid=USER_UID)
        _add(archive, "bin/busybox", tarfile.REGTYPE, 0o755, busybox.read_bytes())
        for applet in applets:
            depth = applet.count("/")
            _add(archive, applet, tarfile.SYMTYPE, 0o777, ("../" * depth + "bin/busybox").encode())
        _add(archive, "etc/passwd", tarfile.REGTYPE, 0o644, passwd.encode())
        _add(archive, "etc/group", tarfile.REGTYPE, 0o644, group.encode())
    return buffer.getvalue()
