"""Trees to and from tar streams and directories: how workspaces cross into and out of containers.

Nothing here needs a checkout on the host: a tree streams out of the store as a tar, and a tar streams into the
store as a tree, hashed member by member as it arrives.
"""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path
from typing import BinaryIO

from ..contracts import Digest, PortablePath, TreeDigest
from ..errors import ContractError, SourceError
from .store import Store
from .trees import EntryKind, TreeBuilder, walk_tree

__all__ = ["export_tree", "tree_from_tar", "write_tar"]

_MODES = {EntryKind.FILE: 0o644, EntryKind.EXECUTABLE: 0o755, EntryKind.DIRECTORY: 0o755, EntryKind.SYMLINK: 0o777}


def write_tar(
    store: Store, tree: Digest, out: BinaryIO, *, prefix: str = "", uid: int = 0, gid: int = 0, mtime: int = 0
) -> None:
    """Stream ``tree`` as an uncompressed tar into ``out``; metadata is fixed so equal trees give equal tars.

    ``prefix`` (for example ``"workspace"``) names a top directory holding the tree; ``uid``/``gid`` set the
    owner, so a non-root agent can write its workspace.
    """
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as archive:
        if prefix:
            archive.addfile(_info(prefix, EntryKind.DIRECTORY, 0, uid, gid, mtime))
        for path, entry in walk_tree(store, tree):
            name = f"{prefix}/{path}" if prefix else str(path)
            if entry.kind is EntryKind.DIRECTORY:
                archive.addfile(_info(name, entry.kind, 0, uid, gid, mtime))
            elif entry.kind is EntryKind.SYMLINK:
                info = _info(name, entry.kind, 0, uid, gid, mtime)
                info.linkname = store.get_bytes(entry.digest).decode("utf-8", "surrogateescape")
                archive.addfile(info)
            else:
                data = store.get_bytes(entry.digest)
                archive.addfile(_info(name, entry.kind, len(data), uid, gid, mtime), io.BytesIO(data))


def _info(name: str, kind: EntryKind, size: int, uid: int, gid: int, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = {EntryKind.DIRECTORY: tarfile.DIRTYPE, EntryKind.SYMLINK: tarfile.SYMTYPE}.get(kind, tarfile.REGTYPE)
    info.size, info.mode, info.uid, info.gid, info.mtime = size, _MODES[kind], uid, gid, mtime
    return info


def tree_from_tar(store: Store, stream: BinaryIO, *, strip: str = "") -> TreeDigest:
    """Hash a tar stream into a stored tree; ``strip`` removes a leading directory (as `docker cp` adds one).

    Hard links become copies of their target's bytes; devices, FIFOs and paths escaping the tree are refused.
    """
    with store.batch():
        builder = TreeBuilder(store)
        seen: dict[str, tuple[EntryKind, bytes]] = {}
        try:
            with tarfile.open(fileobj=stream, mode="r|") as archive:
                for member in archive:
                    relative = _relative(member.name, strip)
                    if relative is None:
                        continue
                    kind, data = _member(archive, member, seen, strip)
                    builder.add(relative, kind, data)
                    if kind is not EntryKind.DIRECTORY:
                        seen[relative] = (kind, data)
        except (tarfile.TarError, EOFError) as exc:  # tarfile's boundary: a damaged or cut stream
            raise SourceError(
                f"the tar stream cannot be read ({type(exc).__name__}: {exc}); nothing was stored"
            ) from exc
        return builder.finish()


def _relative(name: str, strip: str) -> PortablePath | None:
    name = name.removeprefix("./").rstrip("/")
    if strip:
        if name == strip:
            return None
        if not name.startswith(strip + "/"):
            raise SourceError(f"tar member {name!r} is outside {strip!r}")
        name = name[len(strip) + 1 :]
    if name in ("", "."):
        return None
    try:
        return PortablePath(name)
    except ValueError as exc:
        raise SourceError(f"tar member {name!r} cannot enter a tree: {exc}") from exc


def _member(
    archive: tarfile.TarFile, member: tarfile.TarInfo, seen: dict[str, tuple[EntryKind, bytes]], strip: str
) -> tuple[EntryKind, bytes]:
    if member.isdir():
        return EntryKind.DIRECTORY, b""
    if member.issym():
        return EntryKind.SYMLINK, member.linkname.encode("utf-8", "surrogateescape")
    if member.islnk():
        target = _relative(member.linkname, strip)
        if target is None or target not in seen:
            raise SourceError(f"tar hard link {member.name!r} points at {member.linkname!r}, not an earlier file")
        return seen[target]
    if member.isreg():
        handle = archive.extractfile(member)
        assert handle is not None  # a regular member always has data
        kind = EntryKind.EXECUTABLE if member.mode & 0o100 else EntryKind.FILE
        return kind, handle.read()
    raise SourceError(f"tar member {member.name!r} is a device, FIFO or other special file")


def export_tree(store: Store, tree: Digest, destination: Path) -> None:
    """Write ``tree`` into ``destination``, which must be absent or an empty directory."""
    if destination.is_symlink() or (destination.exists() and not destination.is_dir()):
        raise ContractError(f"{destination} exists and is not a directory; export into a new directory")
    if destination.exists() and any(destination.iterdir()):
        raise ContractError(f"{destination} is not empty; export into a new directory")
    try:
        destination.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ContractError(f"cannot create {destination}: {exc.strerror}; export into a new directory") from exc
    for path, entry in walk_tree(store, tree):
        target = destination / path
        if entry.kind is EntryKind.DIRECTORY:
            target.mkdir()
        elif entry.kind is EntryKind.SYMLINK:
            os.symlink(os.fsdecode(store.get_bytes(entry.digest)), target)
        else:
            target.write_bytes(store.get_bytes(entry.digest))
            target.chmod(_MODES[entry.kind])
