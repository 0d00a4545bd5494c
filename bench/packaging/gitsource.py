"""Where a corpus comes from: a git repository directory or a bundle file, read through dulwich only.

Only the object database and the refs are read: never a worktree, the index, ignored files or anything else in
``.git``. A bundle's pack is checked against its trailing checksum, then inflated into a memory object store, so
nothing is written anywhere.

This module is dulwich's boundary: whatever dulwich raises about damaged bytes (``zlib.error``,
``ChecksumMismatch``, ``ObjectFormatException``, a delta that does not apply) leaves it as
:class:`GitSourceCorrupt`, naming the repository and the object; a missing object is ``None``.

A commit is named by its full 40-hex id (used as is) or by a ref (resolved, peeled through annotated tags, and
the resolved id recorded). An abbreviated id is refused: it is ambiguous by construction and may name a
different commit tomorrow.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dulwich.bundle import read_bundle
from dulwich.errors import NotGitRepository, ObjectFormatException
from dulwich.object_store import BaseObjectStore, MemoryObjectStore
from dulwich.objects import Commit, ObjectID, ShaFile, Tag, Tree, TreeEntry, parse_tree
from dulwich.pack import PackData
from dulwich.refs import Ref
from dulwich.repo import Repo

from ..errors import SourceError

__all__ = ["CommitNotFound", "GitSource", "GitSourceCorrupt", "open_source", "resolve_commit"]

FULL_ID = re.compile(r"[0-9a-f]{40}")
_ABBREVIATED = re.compile(r"[0-9a-fA-F]{4,39}")
# The order git itself tries a short ref name in (git-rev-parse(1), "SPECIFYING REVISIONS").
_REF_PREFIXES = (b"", b"refs/", b"refs/tags/", b"refs/heads/", b"refs/remotes/")


class CommitNotFound(SourceError):
    """The commit (or ref) given for a corpus does not name a commit in the repository."""


class GitSourceCorrupt(SourceError):
    """Git's own bytes cannot be read: a damaged loose object or pack, a truncated bundle, a malformed tree."""

    def __init__(self, repository: str, what: str, error: BaseException) -> None:
        detail = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        super().__init__(
            f"{repository}: {what} cannot be read ({type(error).__name__}: {detail})",
            path=repository,
            hint="the repository is damaged: check it with `git fsck` and fetch or re-clone it",
        )


@contextmanager
def _reading(repository: str, what: str) -> Iterator[None]:
    """dulwich's errors while reading ``what``, as one refusal naming it (dulwich has no common base class)."""
    try:
        yield
    except SourceError:
        raise
    except Exception as exc:
        raise GitSourceCorrupt(repository, what, exc) from exc


@dataclass
class GitSource:
    """An opened repository: its object store and a ref lookup (``None`` for an unknown ref)."""

    repository: str
    objects: BaseObjectStore
    lookup_ref: Callable[[bytes], bytes | None]

    def get(self, sha: bytes) -> ShaFile | None:
        """The object named ``sha`` (40 hex bytes), or ``None`` when the repository does not hold it."""
        with _reading(self.repository, f"object {sha.decode(errors='replace')}"):
            try:
                return self.objects[ObjectID(sha)]
            except KeyError:
                return None

    def tree_items(self, tree: Tree) -> list[TreeEntry]:
        """``tree``'s entries as its bytes list them: dulwich's own view keeps only the last of two equal names,
        and a tree holding two (git fsck: duplicateEntries) must be refused, not silently half-read."""
        with _reading(self.repository, f"tree {tree.id.decode()}"):
            try:
                stored = parse_tree(tree.as_raw_string(), sha_len=20)
                return [TreeEntry(name, mode, ObjectID(sha)) for name, mode, sha in stored]
            except ObjectFormatException:
                # Stored bytes parse here exactly as dulwich parsed them on load; only a tree made in memory with
                # an entry its own format cannot hold gets here, and then dulwich's entries are the whole truth.
                return list(tree.iteritems())


@contextmanager
def open_source(repository: str) -> Iterator[GitSource]:
    """Open ``repository`` (a directory holding a git repository, or a bundle file) for reading objects."""
    path = Path(repository)
    if path.is_file():
        with _bundle(repository, path) as source:
            yield source
    elif path.is_dir():
        try:
            repo = Repo(str(path))
        except NotGitRepository as exc:
            raise SourceError(f"{repository} is not a git repository (no object database found)") from exc
        except Exception as exc:  # a damaged .git (its config, its refs) as dulwich reports it
            raise GitSourceCorrupt(repository, "the repository", exc) from exc
        try:
            yield GitSource(repository, repo.object_store, lambda name: _repo_ref(repository, repo, name))
        finally:
            repo.close()
    else:
        raise SourceError(f"{repository} does not exist; pass a git repository directory or a git bundle file")


@contextmanager
def _bundle(repository: str, path: Path) -> Iterator[GitSource]:
    with path.open("rb") as handle:
        try:
            bundle = read_bundle(handle)
        except Exception as exc:  # dulwich signals a bad header with AssertionError, ValueError, struct errors...
            raise SourceError(f"{repository} is neither a git repository nor a git bundle: {exc}") from exc
        with bundle:
            objects = MemoryObjectStore()
            with _reading(repository, "the bundle's pack"):
                if isinstance(bundle.pack_data, PackData):
                    bundle.pack_data.check()  # the trailing checksum: a truncated or altered pack is refused here
            try:
                bundle.store_objects(objects)
            except Exception as exc:
                if not bundle.prerequisites:
                    raise GitSourceCorrupt(repository, "the bundle's pack", exc) from exc
                missing = ", ".join(sha.decode() for sha, _ in bundle.prerequisites)
                raise SourceError(
                    f"the pack in bundle {repository} cannot be read on its own ({exc}); its prerequisite commits "
                    f"({missing}) are not in it: create the bundle without a range (git bundle create F REF)"
                ) from exc
            refs: dict[bytes, bytes] = {bytes(name): bytes(sha) for name, sha in bundle.references.items()}
        yield GitSource(repository, objects, refs.get)


def _repo_ref(repository: str, repo: Repo, name: bytes) -> bytes | None:
    with _reading(repository, f"ref {name.decode(errors='replace')}"):
        try:
            return bytes(repo.refs[Ref(name)])
        except KeyError:
            return None


def resolve_commit(source: GitSource, spec: str) -> str:
    """The full id of the commit ``spec`` names: a full id as is, or a ref resolved and peeled."""
    if FULL_ID.fullmatch(spec.lower()):
        return _peel(source, spec.lower().encode(), spec)
    for prefix in _REF_PREFIXES:
        target = source.lookup_ref(prefix + spec.encode())
        if target is not None:
            return _peel(source, target, spec)
    if _ABBREVIATED.fullmatch(spec):
        raise CommitNotFound(
            f"{spec!r} looks like an abbreviated commit id; abbreviations are refused because they can become "
            f"ambiguous: pass the full 40-character id (git rev-parse {spec}) or a ref name"
        )
    raise CommitNotFound(f"{spec!r} is neither a full commit id nor a ref in {source.repository}")


def _peel(source: GitSource, sha: bytes, spec: str) -> str:
    obj = source.get(sha)
    while isinstance(obj, Tag):
        obj = source.get(obj.object[1])
    if obj is None:
        raise CommitNotFound(f"{spec!r} names {sha.decode()}, which is not in {source.repository}")
    if not isinstance(obj, Commit):
        raise CommitNotFound(f"{spec!r} names a {obj.type_name.decode()}, not a commit, in {source.repository}")
    return obj.id.decode()
