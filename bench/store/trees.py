"""Merkle trees: one directory object per directory, built from disk, entries or a tar stream.

A directory object is a :class:`TreeObject` document listing its entries sorted by name. A file's or an
executable's entry points at the blob of its bytes, a symlink's at the blob of its target, a directory's at the
directory object beneath. A directory entry's ``size`` is the total bytes of the files below it, so a receipt
can state sizes without walking.
"""

from __future__ import annotations

import enum
import operator
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import field_validator, model_validator

from ..contracts import ContractModel, Digest, Document, PortablePath, TreeDigest, canonical_json
from ..contracts.files import collection_paused
from ..contracts.paths import check_entry_name
from ..errors import ContractError, SourceError
from .store import Store

__all__ = [
    "EntryKind",
    "FileEntry",
    "TreeEntry",
    "TreeObject",
    "list_directory",
    "read_regular_file",
    "read_tree",
    "scan_directory",
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


class FileEntry(NamedTuple):
    """One path to put in a tree; a symlink's ``data`` is its target. A tuple: a corpus makes one per file,
    where a frozen dataclass's construction cost a tenth of reading the file."""

    path: PortablePath
    kind: EntryKind
    data: bytes


_FILE, _EXECUTABLE, _SYMLINK, _DIRECTORY = EntryKind.FILE, EntryKind.EXECUTABLE, EntryKind.SYMLINK, EntryKind.DIRECTORY
_NAME = operator.attrgetter("name")
# Never follow a link or wait on a FIFO swapped in for a file since it was listed.
_READ_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
_Leaf = tuple[EntryKind, Digest, int]  # kind, digest, size: a stored leaf's entry, short of its name
# Leaves stored per bulk write (one presence query, one insert, one pack write per batch), and at most this many
# bytes held at once. Small enough that storing a batch takes about as long as a forked reader needs to fill its
# 1 MiB pipe (``bench.forking``): with 1,000 leaves or 16 MiB per batch the reader stood still while
# each one was stored, and a corpus's reading and storing mostly took turns (0.69 s against 0.59 s; issue 18).
_BATCH_ITEMS = 128
_BATCH_BYTES = 1 << 20


@dataclass
class _Dir:
    """A directory under construction: its leaves (None until their batch is stored) and its subdirectories."""

    leaves: dict[str, _Leaf | None] = field(default_factory=dict)
    dirs: dict[str, _Dir] = field(default_factory=dict)
    digest: Digest | None = None  # set once the directory object is stored
    size: int = 0

    def child(self, name: str, path: str) -> _Dir:
        found = self.dirs.get(name)
        if found is None:
            if name in self.leaves:
                raise ContractError(f"{path!r} is both a file and a directory")
            found = self.dirs[name] = _Dir()
        return found

    def document(self) -> bytes:
        """This directory's object, its subdirectories already stored; the canonical bytes of its TreeObject,
        encoded from plain values (validating a model per entry cost more than the rest of an ingest)."""
        entries: list[tuple[str, EntryKind, Digest, int]] = []
        for name, leaf in self.leaves.items():
            assert leaf is not None, "every batch is stored before the directories"
            entries.append((name, *leaf))
        for name, sub in self.dirs.items():
            assert sub.digest is not None, "subdirectories are stored first"
            entries.append((name, EntryKind.DIRECTORY, sub.digest, sub.size))
        entries.sort()
        self.size = sum(size for _, kind, _, size in entries if kind is not EntryKind.SYMLINK)
        listed = [
            {"digest": digest, "kind": kind.value, "name": name, "size": size} for name, kind, digest, size in entries
        ]
        return canonical_json({"entries": listed, "kind": "tree", "schema_version": 1})


class TreeBuilder:
    """Collects leaves by path, storing their bytes a batch at a time, and writes the directory objects at the end."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.root = _Dir()
        self._pending: list[tuple[_Dir, str, EntryKind, bytes]] = []
        self._pending_bytes = 0
        # Every directory by its path: a corpus's leaves arrive in the order git stores them, not grouped by
        # directory, and walking each one's path from the root was a tenth of building its tree.
        self._nodes: dict[str, _Dir] = {"": self.root}

    def add(self, path: PortablePath, kind: EntryKind, data: bytes) -> None:
        if kind is _DIRECTORY:
            self.directory(path)
            return
        parent, _, name = path.rpartition("/")
        node = self._node(parent)
        if name in node.leaves or name in node.dirs:
            raise ContractError(f"{path!r} appears twice in the tree")
        node.leaves[name] = None
        self._pending.append((node, name, kind, data))
        self._pending_bytes += len(data)
        if len(self._pending) >= _BATCH_ITEMS or self._pending_bytes >= _BATCH_BYTES:
            self._store_pending()

    def directory(self, path: PortablePath) -> None:
        self._node(path)

    def _node(self, directory: str) -> _Dir:
        node = self._nodes.get(directory)
        if node is None:
            parent, _, name = directory.rpartition("/")
            node = self._nodes[directory] = self._node(parent).child(name, directory)
        return node

    def _store_pending(self) -> None:
        digests = self.store.put_many([data for _, _, _, data in self._pending])
        for (node, name, kind, data), digest in zip(self._pending, digests, strict=True):
            node.leaves[name] = (kind, digest, len(data))
        self._pending = []
        self._pending_bytes = 0

    def finish(self) -> TreeDigest:
        """Store the directory objects, deepest first, one bulk write per depth."""
        self._store_pending()
        levels: list[list[_Dir]] = []
        pending = [self.root]
        while pending:
            levels.append(pending)
            pending = [sub for node in pending for sub in node.dirs.values()]
        for level in reversed(levels):
            digests = self.store.put_many([node.document() for node in level], document=True)
            for node, digest in zip(level, digests, strict=True):
                node.digest = digest
        assert self.root.digest is not None
        return TreeDigest(self.root.digest)


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
    with collection_paused(), store.batch():  # a few objects per file, none in a cycle: see collection_paused
        builder = TreeBuilder(store)
        for path, kind, data in scan_directory(root):
            if kind is None:
                raise SourceError(f"{root / path} is neither a file, a directory nor a symlink")
            builder.add(path, kind, data)
        return builder.finish()


def scan_directory(
    root: Path, known: Mapping[str, PortablePath] | None = None
) -> Iterator[tuple[PortablePath, EntryKind | None, bytes]]:
    """Every entry below ``root`` in path order (a directory's entries by name, each subdirectory's where it
    falls), with a file's bytes and a symlink's target; the kind is None for anything else (a FIFO, a device).

    Only a file is opened, and its mode and size come from the open descriptor: one path lookup per file instead
    of two. ``known`` is :func:`list_directory`'s."""
    for relative, kind, where in list_directory(root, known):
        if kind is _FILE:
            kind, data = read_regular_file(where)
            yield relative, kind, data
        elif kind is _SYMLINK:
            yield relative, kind, os.fsencode(os.readlink(where))
        else:
            yield relative, kind, b""


def list_directory(
    root: Path, known: Mapping[str, PortablePath] | None = None
) -> Iterator[tuple[PortablePath, EntryKind | None, str]]:
    """Every entry below ``root`` in :func:`scan_directory`'s order, with its kind as the directory listing gives
    it (a regular file is a file, whatever its mode) and its path on this machine; nothing is read. One generator,
    not one per directory. ``known`` holds paths already checked as portable (a manifest's listing), each mapped
    to itself: such a path is taken from it instead of checked again, which cost a twentieth of re-hashing a
    bundle."""
    known = known or {}
    levels = [_listing(str(root), "")]
    while levels:
        entries, prefix = levels[-1]
        for item in entries:
            relative = known.get(prefix + item.name) or _portable(prefix, item.name, item.path)
            if item.is_file(follow_symlinks=False):
                yield relative, _FILE, item.path
            elif item.is_dir(follow_symlinks=False):
                yield relative, _DIRECTORY, item.path
                levels.append(_listing(item.path, relative + "/"))
                break
            elif item.is_symlink():
                yield relative, _SYMLINK, item.path
            else:
                yield relative, None, item.path
        else:
            levels.pop()


def _listing(directory: str, prefix: str) -> tuple[Iterator[os.DirEntry[str]], str]:
    with os.scandir(directory) as iterator:
        return iter(sorted(iterator, key=_NAME)), prefix


def read_regular_file(path: str) -> tuple[EntryKind, bytes]:
    """The kind (file or executable) and bytes of the regular file at ``path``."""
    descriptor = os.open(path, _READ_FLAGS)
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):  # replaced since it was listed
            raise SourceError(f"{path} is neither a file, a directory nor a symlink")
        kind = _EXECUTABLE if status.st_mode & stat.S_IXUSR else _FILE
        data = os.read(descriptor, status.st_size + 1)  # a regular file's read comes back short only at its end
        if len(data) <= status.st_size:
            return kind, data
        chunks = [data]  # it grew since it was listed: read on to its end
        while chunk := os.read(descriptor, 1 << 20):
            chunks.append(chunk)
        return kind, b"".join(chunks)
    finally:
        os.close(descriptor)


def _portable(parent: str, name: str, where: str) -> PortablePath:
    """The path of ``name`` below ``parent`` (a portable path's "dir/", or empty), or a refusal naming ``where``."""
    try:
        if not name.isascii():  # a name that is not UTF-8 comes back from the system surrogate-escaped
            (parent + name).encode("utf-8")
        return PortablePath.joined(parent, name)
    except (UnicodeEncodeError, ValueError) as exc:
        raise SourceError(f"{os.fsencode(where)!r} has a name that cannot enter a tree: {exc}") from exc


def read_tree(store: Store, digest: Digest) -> TreeObject:
    return store.get_document(digest, TreeObject)


def walk_tree(store: Store, digest: Digest, prefix: str = "") -> Iterator[tuple[PortablePath, TreeEntry]]:
    """Every entry below ``digest``, directories before their contents, in name order.

    A directory's subdirectories are read in one batch when it is entered (one query per directory that has
    any, instead of one per directory), and the walk keeps one iterator per level, not a generator chain."""
    levels = [_level(store, read_tree(store, digest), prefix)]
    while levels:
        entries, prefix, below = levels[-1]
        for entry in entries:
            path = PortablePath(prefix + entry.name)
            yield path, entry
            if entry.kind is _DIRECTORY:
                levels.append(_level(store, below[entry.digest], path + "/"))
                break
        else:
            levels.pop()


def _level(store: Store, tree: TreeObject, prefix: str) -> tuple[Iterator[TreeEntry], str, dict[Digest, TreeObject]]:
    subdirectories = list(dict.fromkeys(entry.digest for entry in tree.entries if entry.kind is _DIRECTORY))
    if not subdirectories:  # most directories of a deep tree: no read at all
        return iter(tree.entries), prefix, {}
    return (
        iter(tree.entries),
        prefix,
        dict(zip(subdirectories, store.get_documents(subdirectories, TreeObject), strict=True)),
    )


PUBLIC_CONTRACTS = (TreeEntry, TreeObject)
