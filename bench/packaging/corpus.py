"""A corpus: a store tree built from one commit's git objects, and its receipt (the stage: bench.stages.corpus).

The tree holds exactly what ``git archive COMMIT`` would: paths, executable bits, symlinks as symlinks, bytes.
It never holds history, the index, ignored files or ``.git``. Everything is written in one store transaction, so
a refusal half way (a missing blob, a crafted name) leaves nothing behind: never a partial tree.

Refused, each naming the path: submodules (the content is not there), tree entries named ``.git`` or containing
``..``, ``/`` or NUL (a crafted tree), two entries of one name (git fsck's duplicateEntries), non-UTF-8 names
(shown escaped), symlinks that are absolute or resolve outside the tree, missing objects and damaged ones. Git LFS
pointer files are kept as they are and listed in the receipt.

The repository is named portably, never by a host path: by the name a suite declares, a directory's own name, or
a bundle's content digest. Where it lies is a locator param, left out of the action key, so the same commit
packaged from two checkouts, or through two spellings of one path, is one cache hit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from dulwich.objects import Blob, Commit, Tree, object_class
from pydantic import StringConstraints

from ..builder import LOCATOR, Ports
from ..contracts import BlobDigest, ContractModel, Document, GitObjectId, PortablePath, Ref, TreeDigest
from ..contracts.checked_files import read_bounded
from ..contracts.checked_files import resolved as resolved_path
from ..errors import ContractError, SourceError
from ..store import EntryKind, FileEntry, Store, tree_from_entries
from .gitsource import GitSource, open_source, resolve_commit
from .symlinks import check_symlinks

__all__ = [
    "CorpusError",
    "CorpusOutputs",
    "CorpusParams",
    "LfsPointer",
    "MaterializationReceipt",
    "RepositoryName",
    "corpus_params",
    "materialize",
    "repository_name",
]

_TREE, _SYMLINK, _GITLINK = 0o040000, 0o120000, 0o160000
_LFS_HEADER = b"version https://git-lfs.github.com/spec/v1\n"
_BUNDLE_LIMIT = 1 << 31  # a bundle is read whole (into memory, as its objects are); none this tool makes nears it
_LFS_LIMIT = 1024  # git-lfs never writes a pointer this large (its spec)
_LFS_FIELDS = re.compile(rb"^oid sha256:([0-9a-f]{64})\nsize ([0-9]+)$", re.MULTILINE)


class CorpusError(SourceError):
    """A commit's tree is refused; ``path`` is the tree path at fault, control characters shown escaped (git
    allows a newline in a name, and a refusal is one line)."""

    def __init__(self, path: str, message: str) -> None:
        shown = "".join(
            c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}" for c in path
        )
        super().__init__(f"{shown}: {message}", path=shown)


class LfsPointer(ContractModel):
    """A Git LFS pointer file: packaged as the pointer it is, since the real content is not in git."""

    path: PortablePath
    oid: str
    size: int


# A suite's declared name, a directory's name, or a bundle's digest ("blake3:<hex>:<size>"): never a host path.
RepositoryName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:+-]{0,199}$")]


class MaterializationReceipt(Document):
    kind: Literal["materialization-receipt"] = "materialization-receipt"
    schema_version: Literal[1] = 1
    repository: RepositoryName
    commit: GitObjectId
    git_tree: GitObjectId
    tree: TreeDigest
    files: int  # regular and executable files
    symlinks: int
    total_bytes: int
    lfs_pointers: tuple[LfsPointer, ...]


class CorpusParams(ContractModel):
    """What is packaged (the repository's portable name and the commit, both keyed) and where to read it."""

    repository: RepositoryName
    commit: GitObjectId
    source: Annotated[str, LOCATOR] = ""  # the directory or bundle file; left out of the action key


@dataclass
class _Walk:
    """What the walk saw besides the entries it yields: symlinks to check at the end, counts, LFS pointers."""

    links: dict[str, bytes] = field(default_factory=dict)
    files: int = 0
    total_bytes: int = 0
    lfs: list[LfsPointer] = field(default_factory=list)


def repository_name(repository: str) -> str:
    """The portable name of the repository at ``repository``: a bundle by its content digest, a directory by its
    own name (a ``.git`` directory by its parent's, a bare ``x.git`` as ``x``)."""
    path = Path(repository)
    if path.is_file():
        return str(BlobDigest.of(read_bounded(path, "the git bundle", max_bytes=_BUNDLE_LIMIT, error=SourceError)))
    resolved = resolved_path(path, "the repository", error=SourceError)
    name = resolved.parent.name if resolved.name == ".git" else resolved.name.removesuffix(".git")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,199}", name):
        raise ContractError(
            f"the repository directory's name {name!r} cannot name it portably",
            path=repository,
            hint="give its name explicitly (letters, digits and . _ + -), e.g. `stele-bench corpus --name NAME`",
        )
    return name


def corpus_params(repository: str, commit: str, name: str | None = None) -> CorpusParams:
    """Resolve ``commit`` (a full id or a ref) in ``repository``: the stage's params name the commit itself, and
    the repository by ``name`` (default: :func:`repository_name`), with its location as the locator."""
    with open_source(repository) as source:
        resolved = GitObjectId(resolve_commit(source, commit))
    return CorpusParams(repository=name or repository_name(repository), commit=resolved, source=repository)


def materialize(
    store: Store, source: GitSource, commit: GitObjectId, name: str | None = None
) -> MaterializationReceipt:
    """Store the tree of ``commit`` (a full id) and return its receipt naming the repository ``name`` (default:
    :func:`repository_name`); nothing is stored on refusal."""
    obj = source.get(commit.encode())
    if not isinstance(obj, Commit):
        raise CorpusError("(commit)", f"{commit} is not a commit in {source.repository}")
    walk = _Walk()
    # Read on this thread: a worker thread inflating git objects while this one stored them measured slower
    # at real-time priority (1.05-1.39 s wall against 0.97-1.13 s, 1.3-1.8 s CPU against 0.9-1.1 s; issue 18):
    # dulwich's object reading holds the GIL for most of its work, so the two mostly took turns.
    tree = tree_from_entries(store, _entries(source, obj.tree, walk))
    return MaterializationReceipt(
        repository=name or repository_name(source.repository),
        commit=commit,
        git_tree=GitObjectId(obj.tree.decode()),
        tree=tree,
        files=walk.files,
        symlinks=len(walk.links),
        total_bytes=walk.total_bytes,
        lfs_pointers=tuple(sorted(walk.lfs, key=lambda pointer: pointer.path)),  # not in the order files were read
    )


def _entries(source: GitSource, tree_id: bytes, walk: _Walk) -> Iterator[FileEntry]:
    """Yield every leaf below ``tree_id``; the last step checks the symlinks against the whole tree."""
    yield from _walk_tree(source, tree_id, walk)
    for path, reason in check_symlinks(walk.links):
        raise CorpusError(path, reason)


def _walk_tree(source: GitSource, root: bytes, walk: _Walk) -> Iterator[FileEntry]:
    """Every entry below the tree ``root``: directories and symlinks as the trees are read, depth first, then
    the files in the order their objects lie in the repository (:meth:`GitSource.raw_many`), each object read
    once however many paths it has. Objects are read raw (type and bytes) and checked against their names
    there: building a dulwich object per blob cost more than inflating it."""
    files: dict[bytes, list[tuple[PortablePath, EntryKind]]] = {}
    pending: list[tuple[bytes, str]] = [(root, "")]
    while pending:
        tree_id, prefix = pending.pop()
        below = []
        for raw, mode, sha in _tree_entries(source, tree_id, prefix):
            path = _checked_path(prefix, raw)
            if mode == _TREE:
                yield FileEntry(path, EntryKind.DIRECTORY, b"")
                below.append((sha, path + "/"))
            elif mode == _GITLINK:
                raise CorpusError(
                    path, f"is a submodule (gitlink to {sha.decode()}); its content is not in this repository"
                )
            elif mode == _SYMLINK:
                target = _raw(source, sha, Blob, path)
                walk.links[path] = target
                yield FileEntry(path, EntryKind.SYMLINK, target)
            elif mode & 0o170000 == 0o100000:
                kind = EntryKind.EXECUTABLE if mode & 0o111 else EntryKind.FILE
                files.setdefault(sha, []).append((path, kind))
            else:
                raise CorpusError(path, f"has git mode {mode:o}, which is not a file, directory or symlink")
        pending.extend(reversed(below))
    for sha, found in source.raw_many({sha: paths[0][0] for sha, paths in files.items()}):
        for path, kind in files[sha]:
            data = _checked_blob(source, sha, found, path)
            walk.files += 1
            walk.total_bytes += len(data)
            _note_lfs(walk, path, data)
            yield FileEntry(path, kind, data)


def _tree_entries(source: GitSource, sha: bytes, prefix: str) -> list[tuple[bytes, int, bytes]]:
    """The (name, mode, hex id) entries of the tree ``sha`` at ``prefix``, read raw and parsed as its bytes list
    them, refusing a name that appears twice (dulwich's own view keeps only the last)."""
    shown = prefix.rstrip("/") or "(root tree)"
    entries = source.tree_entries(sha, _raw(source, sha, Tree, shown), shown)
    seen: set[bytes] = set()
    for name, _, _ in entries:
        if name in seen:
            raise CorpusError(
                _shown(prefix, name),
                "appears twice in its git tree (git fsck: duplicateEntries); a crafted tree has no one meaning",
            )
        seen.add(name)
    return entries


def _raw(source: GitSource, sha: bytes, expected: type[Blob | Tree], path: str) -> bytes:
    """The bytes of the object ``sha``, which must be of type ``expected``."""
    return _checked_blob(source, sha, source.raw(sha, path), path, expected)


def _checked_blob(
    source: GitSource, sha: bytes, found: tuple[int, bytes] | None, path: str, expected: type[Blob | Tree] = Blob
) -> bytes:
    """The bytes of ``found`` (what reading ``sha`` gave), refusing an absent object or one of another type."""
    if found is None:
        raise CorpusError(
            path,
            f"its {expected.type_name.decode()} {sha.decode()} is missing from {source.repository}; "
            "fetch the missing objects (git fetch --refetch) before packaging",
        )
    type_num, data = found
    if type_num != expected.type_num:
        actual = object_class(type_num)
        shown = actual.type_name.decode() if actual is not None else f"type {type_num}"
        raise CorpusError(path, f"object {sha.decode()} is a {shown}, not a {expected.type_name.decode()}")
    return data


def _checked_path(prefix: str, raw: bytes) -> PortablePath:
    """The tree path for entry name ``raw`` under ``prefix``, refusing names a checkout would not survive."""
    if b"\x00" in raw or b"/" in raw or raw in (b"", b".", b".."):
        raise CorpusError(
            _shown(prefix, raw), "is a crafted tree entry (a name containing NUL or '/', or an empty, '.' or '..' name)"
        )
    if raw.rstrip(b". ").lower() == b".git":
        raise CorpusError(
            _shown(prefix, raw), "is a tree entry named .git; a tree must never carry repository metadata"
        )
    try:
        name = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CorpusError(
            _shown(prefix, raw), "has a name that is not UTF-8 (shown escaped); rename it upstream"
        ) from None
    try:
        return PortablePath(prefix + name)
    except ValueError as exc:
        raise CorpusError(_shown(prefix, raw), f"cannot enter a portable tree: {exc}") from None


def _shown(prefix: str, raw: bytes) -> str:
    """The path of entry ``raw`` as an error shows it: escaped where it is not printable UTF-8."""
    return prefix + raw.decode("utf-8", "backslashreplace")  # CorpusError escapes what is not printable


def _note_lfs(walk: _Walk, path: str, data: bytes) -> None:
    if len(data) < _LFS_LIMIT and data.startswith(_LFS_HEADER):
        found = _LFS_FIELDS.search(data)
        if found is None:
            raise CorpusError(path, "starts like a Git LFS pointer but has no 'oid sha256:' and 'size' lines")
        walk.lfs.append(LfsPointer(path=PortablePath(path), oid=found[1].decode(), size=int(found[2])))


class CorpusOutputs(Ports):
    tree: TreeDigest
    receipt: Ref[MaterializationReceipt]
