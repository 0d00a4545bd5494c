"""Merkle trees: one directory object per directory, built from disk, entries or a tar stream.

A directory object is a :class:`TreeObject` document listing its entries sorted by name. A file's or an
executable's entry points at the blob of its bytes, a symlink's at the blob of its target, a directory's at the
directory object beneath. A directory entry's ``size`` is the total bytes of the files below it, so a receipt
can state sizes without walking.
"""

from __future__ import annotations

import enum
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import field_validator, model_validator

from ..contracts import ContractModel, Digest, Document, PortablePath, TreeDigest
from ..contracts.paths import check_entry_name
from ..errors import ContractError, SourceError
from .store import Store

__all__ = [
    "EntryKind",
    "FileEntry",
    "TreeEntry",
    "TreeObject",
    "read_tree",
    "tree_from_directory",
    "tree_from_entries",
    "walk_tree",
]


class EntryKind(enum.StrEnum):
    FILE = "file"
    EXECUTABLE = "executable"
    SYMLINK = "symlink"
    DIRECTORY = "directory"


class TreeEntry(ContractModel):
    name: str
    kind: EntryKind
    digest: Digest
    size: int

    @field_validator("name")
    @classmethod
    def _one_component(cls, name: str) -> str:
        reason = check_entry_name(name)
        if reason is not None:
            raise ValueError(f"{name!r} cannot be a tree entry name: {reason}")
        return name


class TreeObject(Document):
    kind: Literal["tree"] = "tree"
    schema_version: Literal[1] = 1
    entries: tuple[TreeEntry, ...]

    @model_validator(mode="after")
    def _sorted_unique(self) -> TreeObject:
        names = [entry.name for entry in self.entries]
        if names != sorted(set(names)):
            raise ValueError("tree entries must be sorted by name and unique")
        return self


@dataclass(frozen=True)
class FileEntry:
    """One non-directory path to put in a tree; a symlink's ``data`` is its target."""

    path: PortablePath
    kind: EntryKind
    data: bytes


@dataclass
class _Dir:
    """A directory under construction: leaves already stored, subdirectories still open."""

    leaves: dict[str, TreeEntry] = field(default_factory=dict)
    dirs: dict[str, _Dir] = field(default_factory=dict)

    def child(self, name: str, path: str) -> _Dir:
        if name in self.leaves:
            raise ContractError(f"{path!r} is both a file and a directory")
        return self.dirs.setdefault(name, _Dir())

    def add_leaf(self, name: str, entry: TreeEntry, path: str) -> None:
        if name in self.leaves or name in self.dirs:
            raise ContractError(f"{path!r} appears twice in the tree")
        self.leaves[name] = entry

    def write(self, store: Store) -> TreeEntry:
        """Store this directory bottom-up; returns its entry with an empty name placeholder."""
        entries = dict(self.leaves)
        for name, sub in self.dirs.items():
            entries[name] = sub.write(store).model_copy(update={"name": name})
        ordered = tuple(entries[name] for name in sorted(entries))
        digest = store.put_document(TreeObject(entries=ordered))
        total = sum(entry.size for entry in ordered if entry.kind is not EntryKind.SYMLINK)
        return TreeEntry(name="root", kind=EntryKind.DIRECTORY, digest=digest, size=total)


class TreeBuilder:
    """Collects stored leaves by path and writes the directory objects once at the end."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.root = _Dir()

    def add(self, path: PortablePath, kind: EntryKind, data: bytes) -> None:
        if kind is EntryKind.DIRECTORY:
            self.directory(path)
            return
        digest = self.store.put_bytes(data)
        size = len(data)
        *parents, name = path.parts
        node = self.root
        for depth, part in enumerate(parents):
            node = node.child(part, "/".join(path.parts[: depth + 1]))
        node.add_leaf(name, TreeEntry(name=name, kind=kind, digest=digest, size=size), path)

    def directory(self, path: PortablePath) -> None:
        node = self.root
        for depth, part in enumerate(path.parts):
            node = node.child(part, "/".join(path.parts[: depth + 1]))

    def finish(self) -> TreeDigest:
        return TreeDigest(self.root.write(self.store).digest)


def tree_from_entries(store: Store, entries: Iterable[FileEntry]) -> TreeDigest:
    """Store the tree holding exactly ``entries`` (parents are implied) and return its digest."""
    with store.batch():
        builder = TreeBuilder(store)
        for entry in entries:
            builder.add(entry.path, entry.kind, entry.data)
        return builder.finish()


def tree_from_directory(store: Store, root: Path) -> TreeDigest:
    """Store the tree of ``root`` as it is on disk; special files and non-UTF-8 names are refused."""
    if not root.is_dir():
        raise SourceError(f"{root} is not a directory")
    with store.batch():
        builder = TreeBuilder(store)
        _scan(builder, root, "")
        return builder.finish()


def _scan(builder: TreeBuilder, directory: Path, prefix: str) -> None:
    with os.scandir(directory) as iterator:
        items = sorted(iterator, key=lambda item: item.name)
    for item in items:
        relative = _portable(prefix + item.name, directory / item.name)
        mode = item.stat(follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode):
            builder.add(relative, EntryKind.SYMLINK, os.fsencode(os.readlink(item.path)))
        elif stat.S_ISDIR(mode):
            builder.directory(relative)
            _scan(builder, Path(item.path), relative + "/")
        elif stat.S_ISREG(mode):
            kind = EntryKind.EXECUTABLE if mode & stat.S_IXUSR else EntryKind.FILE
            builder.add(relative, kind, Path(item.path).read_bytes())
        else:
            raise SourceError(f"{directory / item.name} is neither a file, a directory nor a symlink")


def _portable(relative: str, where: Path) -> PortablePath:
    try:
        relative.encode("utf-8")
        return PortablePath(relative)
    except (UnicodeEncodeError, ValueError) as exc:
        raise SourceError(f"{os.fsencode(where)!r} has a name that cannot enter a tree: {exc}") from exc


def read_tree(store: Store, digest: Digest) -> TreeObject:
    return store.get_document(digest, TreeObject)


def walk_tree(store: Store, digest: Digest, prefix: str = "") -> Iterator[tuple[PortablePath, TreeEntry]]:
    """Every entry below ``digest``, directories before their contents, in name order."""
    for entry in read_tree(store, digest).entries:
        path = PortablePath(prefix + entry.name)
        yield path, entry
        if entry.kind is EntryKind.DIRECTORY:
            yield from walk_tree(store, entry.digest, path + "/")


PUBLIC_CONTRACTS = (TreeEntry, TreeObject)
