"""Workspace identity: the packaged tree plus a ``.git`` holding one synthetic commit of exactly that tree.

A suite may declare the repository its workspace presents itself as (:class:`~bench.suite.suite.WorkspaceIdentity`):
a remote and its default branch. This stage writes the ``.git`` a fresh clone of that branch would have, except
that its only commit holds the packaged tree itself, so no history can leak (the corpus rule stands). Everything in
it is fixed: the author is the container's user, both dates are :data:`~.layout.WORKSPACE_MTIME`, the message is
constant and objects are stored uncompressed (zlib level 0 writes the same bytes under every zlib), so every run
and both arms get the same bytes, and the stage re-derives bit for bit.

The index records each file as the workspace lays it out (mode, size, :data:`~.layout.WORKSPACE_MTIME`); the
config's ``checkStat = minimal`` keeps git from treating the inode and device numbers of the unpacked files as
changes, so ``git status`` is clean in a fresh container. A remote or branch naming the harness or a condition is
refused.
"""

from __future__ import annotations

import hashlib
import io
import stat
from collections.abc import Iterator

from dulwich.index import IndexEntry, Stage, write_index
from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree

from ..builder import Ports, StageContext, StageKind, TreeReads, stage
from ..contracts import ContractModel, Digest, PortablePath, TreeDigest
from ..errors import ContractError
from ..packaging.markers import condition_terms, harness_terms
from ..sandbox.layout import USER_GID, USER_NAME, USER_UID, WORKSPACE_MTIME
from ..store import EntryKind, FileEntry, Store, TreeEntry, TreeObject, read_tree, tree_from_entries
from ..suite.suite import BranchName, RemoteUrl

__all__ = [
    "GIT_DIRECTORY",
    "IdentityInputs",
    "IdentityOutputs",
    "IdentityParams",
    "git_directory",
    "with_identity",
    "workspace_identity",
]

GIT_DIRECTORY = ".git"
_AUTHOR = f"{USER_NAME} <{USER_NAME}@localhost>".encode()
_MESSAGE = b"Initial commit\n"
_MODES = {EntryKind.FILE: 0o100644, EntryKind.EXECUTABLE: 0o100755, EntryKind.SYMLINK: 0o120000}
_CONFIG = """[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = false
\tlogallrefupdates = true
\tcheckStat = minimal
\ttrustctime = false
[remote "origin"]
\turl = {url}
\tfetch = +refs/heads/*:refs/remotes/origin/*
[branch "{branch}"]
\tremote = origin
\tmerge = refs/heads/{branch}
"""


class IdentityParams(ContractModel):
    remote_url: RemoteUrl
    default_branch: BranchName


class _Objects:
    """The git objects of a tree, and the index entries of its files, collected while it is converted."""

    def __init__(self) -> None:
        self.objects: dict[ObjectID, ShaFile] = {}
        self.index: list[tuple[bytes, IndexEntry]] = []

    def add(self, obj: ShaFile) -> ObjectID:
        self.objects[obj.id] = obj
        return obj.id

    def tree(self, store: Store, digest: Digest, prefix: str) -> ObjectID | None:
        """The git tree id of the store tree ``digest``; None for a directory holding no file (git keeps none)."""
        listing = read_tree(store, digest).entries
        contents = dict(store.get_many([e.digest for e in listing if e.kind is not EntryKind.DIRECTORY]))
        tree = Tree()
        for entry in listing:
            if entry.kind is EntryKind.DIRECTORY:
                below = self.tree(store, entry.digest, f"{prefix}{entry.name}/")
                if below is not None:
                    tree.add(entry.name.encode(), stat.S_IFDIR, below)
                continue
            blob = Blob.from_string(contents[entry.digest])
            tree.add(entry.name.encode(), _MODES[entry.kind], self.add(blob))
            self.index.append((f"{prefix}{entry.name}".encode(), _index_entry(entry, blob)))
        return self.add(tree) if len(tree) else None


def _index_entry(entry: TreeEntry, blob: Blob) -> IndexEntry:
    when = (WORKSPACE_MTIME, 0)
    size = len(blob.as_raw_string())
    return IndexEntry(when, when, 0, 0, _MODES[entry.kind], USER_UID, USER_GID, size, blob.id, 0, 0)


def _check_neutral(params: IdentityParams) -> None:
    for field, value in (("remote_url", params.remote_url), ("default_branch", params.default_branch)):
        named = harness_terms(value) + condition_terms(value)
        if named:
            raise ContractError(
                f"the workspace identity's {field} {value!r} names the harness or a condition ({', '.join(named)}); "
                "an agent sees it in `git remote -v`: choose a name the project itself would use",
                field=field,
                actual=value,
            )


def git_directory(store: Store, tree: Digest, params: IdentityParams) -> Iterator[FileEntry]:
    """The files of the ``.git`` directory presenting ``tree`` as the one commit of ``params``' branch."""
    _check_neutral(params)
    collected = _Objects()
    root = collected.tree(store, tree, "")
    if root is None:
        raise ContractError(f"the packaged tree {tree} holds no file; a commit of it would be empty")
    commit = Commit()
    commit.tree = root
    commit.author = commit.committer = _AUTHOR
    commit.author_time = commit.commit_time = WORKSPACE_MTIME
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = _MESSAGE
    head = collected.add(commit).decode() + "\n"
    branch = params.default_branch
    text = {
        "HEAD": f"ref: refs/heads/{branch}\n",
        "config": _CONFIG.format(url=params.remote_url, branch=branch),
        f"refs/heads/{branch}": head,
        f"refs/remotes/origin/{branch}": head,
        "refs/remotes/origin/HEAD": f"ref: refs/remotes/origin/{branch}\n",
    }
    for path, content in text.items():
        yield FileEntry(PortablePath(path), EntryKind.FILE, content.encode())
    for sha, obj in sorted(collected.objects.items()):
        name = sha.decode()
        # Level 0: deflate's stored blocks, the same bytes whichever zlib wrote them.
        data = obj.as_legacy_object(compression_level=0)
        yield FileEntry(PortablePath(f"objects/{name[:2]}/{name[2:]}"), EntryKind.FILE, data)
    yield FileEntry(PortablePath("index"), EntryKind.FILE, _index_bytes(sorted(collected.index)))


def _index_bytes(entries: list[tuple[bytes, IndexEntry]]) -> bytes:
    """The index file: its entries, then the SHA-1 of everything before it (git refuses an index without)."""
    buffer = io.BytesIO()
    write_index(buffer, [entry.serialize(path, Stage.NORMAL) for path, entry in entries])
    return buffer.getvalue() + hashlib.sha1(buffer.getvalue()).digest()


def with_identity(store: Store, tree: Digest, params: IdentityParams) -> TreeDigest:
    """``tree`` with the ``.git`` of :func:`git_directory` beside its entries (the packaged tree holds none)."""
    files = list(git_directory(store, tree, params))
    dot_git = tree_from_entries(store, files)
    size = sum(len(entry.data) for entry in files)
    root = read_tree(store, tree)
    if any(entry.name == GIT_DIRECTORY for entry in root.entries):
        raise ContractError(f"the packaged tree {tree} already holds a {GIT_DIRECTORY}; packaging never writes one")
    added = TreeEntry(name=GIT_DIRECTORY, kind=EntryKind.DIRECTORY, digest=dot_git, size=size)
    entries = tuple(sorted((*root.entries, added), key=lambda entry: entry.name))
    return TreeDigest(store.put_document(TreeObject(entries=entries)))


class IdentityInputs(Ports):
    tree: TreeDigest


class IdentityOutputs(Ports):
    tree: TreeDigest


@stage("workspace-identity", version=1, kind=StageKind.DETERMINISTIC, trees=TreeReads.FILES)
def workspace_identity(context: StageContext, inputs: IdentityInputs, params: IdentityParams) -> IdentityOutputs:
    """The packaged ``tree`` as the checked-out default branch of the declared remote."""
    return IdentityOutputs(tree=with_identity(context.store, inputs.tree, params))
