"""A git bundle of one commit and its whole tree, without its history: how a suite pins its project's source.

Written through dulwich like everything else git here; whatever it raises leaves as
:class:`~.gitsource.GitSourceCorrupt`, naming the repository.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from dulwich.bundle import Bundle, write_bundle
from dulwich.objects import Commit, ObjectID, ShaFile, Tree
from dulwich.pack import UnpackedObject, full_unpacked_object
from dulwich.refs import Ref

from .gitsource import GitSource, GitSourceCorrupt, corrupt_on_error, open_source, resolve_commit

__all__ = ["write_commit_bundle"]

_BUNDLE_REF = b"refs/heads/main"
_SUBMODULE = 0o160000


class _Objects:
    """The pack data a bundle is written from: the given objects, whole (no deltas), in order."""

    def __init__(self, objects: list[ShaFile], object_format: object) -> None:
        self.objects = objects
        self.object_format = object_format  # dulwich writes the bundle in the source repository's hash format

    def __len__(self) -> int:
        return len(self.objects)

    def iter_unpacked(self) -> Iterator[UnpackedObject]:
        return (full_unpacked_object(obj) for obj in self.objects)

    def close(self) -> None:
        pass


def _tree_objects(source: GitSource, tree_id: bytes, found: list[ShaFile]) -> None:
    tree = source.get(tree_id)
    if not isinstance(tree, Tree):
        raise GitSourceCorrupt(source.repository, f"tree {tree_id.decode()}", KeyError("missing"))
    found.append(tree)
    for _name, mode, sha in source.tree_entries(tree_id, tree.as_raw_string()):
        if mode == _SUBMODULE:  # another repository's commit: not an object of this one
            continue
        if mode & 0o040000:
            _tree_objects(source, sha, found)
            continue
        blob = source.get(sha)
        if blob is None:
            raise GitSourceCorrupt(source.repository, f"blob {sha.decode()}", KeyError("missing"))
        found.append(blob)


def write_commit_bundle(repository: str, spec: str, target: Path) -> str:
    """Write a git bundle holding the commit ``spec`` names and its whole tree, without its history (a corpus is
    built from the tree alone); its parents are the bundle's prerequisites, so git reads it as what it is. Returns
    the commit's full id."""
    with open_source(repository) as source:
        commit_id = resolve_commit(source, spec)
        commit = source.get(commit_id.encode())
        assert isinstance(commit, Commit)  # resolve_commit peeled it to one
        objects: list[ShaFile] = [commit]
        _tree_objects(source, commit.tree, objects)
        bundle = Bundle()
        bundle.version = 2
        bundle.capabilities = {}
        bundle.prerequisites = [(parent, b"") for parent in commit.parents]
        bundle.references = {Ref(_BUNDLE_REF): ObjectID(commit_id.encode())}
        # write_bundle reads only len(), iter_unpacked() and object_format of its pack data.
        bundle.pack_data = _Objects(objects, getattr(source.objects, "object_format", None))  # type: ignore[assignment]
        try:
            with corrupt_on_error(repository, "the objects written to the bundle"), target.open("wb") as handle:
                write_bundle(handle, bundle)
        finally:
            bundle.close()  # dulwich closes a bundle's pack data from __del__ otherwise, late at exit
    return commit_id
