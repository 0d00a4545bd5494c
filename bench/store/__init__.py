"""The content-addressed object store: bytes, documents, Merkle trees, refs and the action cache."""

from .backends import PACK_LIMIT
from .store import Store
from .tarstream import export_tree, tree_from_tar, write_tar
from .trees import (
    EntryKind,
    FileEntry,
    TreeEntry,
    TreeObject,
    read_tree,
    tree_from_directory,
    tree_from_entries,
    walk_tree,
)

__all__ = [
    "PACK_LIMIT",
    "EntryKind",
    "FileEntry",
    "Store",
    "TreeEntry",
    "TreeObject",
    "export_tree",
    "read_tree",
    "tree_from_directory",
    "tree_from_entries",
    "tree_from_tar",
    "walk_tree",
    "write_tar",
]
