"""Real git repositories, written object by object with dulwich, so a test can craft what `git` would refuse."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

from dulwich.objects import Blob, Commit, Tree
from dulwich.repo import Repo

# A path maps to bytes (a regular file) or to (git mode, bytes); a gitlink's bytes are the 40-hex commit id.
Files = Mapping[str, bytes | tuple[int, bytes]]
FILE, EXECUTABLE, SYMLINK, GITLINK = 0o100644, 0o100755, 0o120000, 0o160000


def write_tree(
    repo: Repo,
    files: Mapping[bytes, tuple[int, bytes]],
    skip_blobs: frozenset[bytes] = frozenset(),
    verbatim: Mapping[bytes, bytes] | None = None,
) -> bytes:
    """Store the tree of ``files`` (byte paths split on '/') plus ``verbatim`` names (never split) at its root.

    Blobs whose bytes are in ``skip_blobs`` are referenced but not stored: a repository with missing objects.
    """
    children: dict[bytes, dict[bytes, tuple[int, bytes]]] = {}
    tree = Tree()
    for name, data in (verbatim or {}).items():
        blob = Blob.from_string(data)
        repo.object_store.add_object(blob)
        tree.add(name, FILE, blob.id)
    for path, (mode, data) in files.items():
        head, _, rest = path.partition(b"/")
        if rest:
            children.setdefault(head, {})[rest] = (mode, data)
        elif mode == GITLINK:
            tree.add(head, mode, data)
        else:
            blob = Blob.from_string(data)
            if data not in skip_blobs:
                repo.object_store.add_object(blob)
            tree.add(head, mode, blob.id)
    for name, below in children.items():
        tree.add(name, 0o040000, write_tree(repo, below, skip_blobs))
    repo.object_store.add_object(tree)
    return tree.id


def commit_tree(repo: Repo, tree: bytes, ref: bytes = b"refs/heads/main", parents: tuple[str, ...] = ()) -> str:
    commit = Commit()
    commit.tree = tree
    commit.parents = [parent.encode() for parent in parents]
    commit.author = commit.committer = b"Dev <dev@example.org>"
    commit.author_time = commit.commit_time = 1_700_000_000
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = b"snapshot"
    repo.object_store.add_object(commit)
    repo.refs[ref] = commit.id
    return commit.id.decode()


RepoFactory = Callable[..., tuple[Path, str]]


def repo_factory(tmp_path: Path) -> RepoFactory:
    """``make_repo(files, verbatim=..., skip_blobs=...)`` -> (repository directory, commit id on refs/heads/main)."""
    counter = iter(range(1000))

    def build(
        files: Files | None = None,
        *,
        verbatim: Mapping[bytes, bytes] | None = None,
        skip_blobs: frozenset[bytes] = frozenset(),
    ) -> tuple[Path, str]:
        path = tmp_path / f"repo{next(counter)}"
        entries = {name.encode(): v if isinstance(v, tuple) else (FILE, v) for name, v in (files or {}).items()}
        with Repo.init(str(path), mkdir=True) as repo:
            commit = commit_tree(repo, write_tree(repo, entries, skip_blobs, verbatim))
            repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
        return path, commit

    return build


def packed(repo: Path) -> tuple[Path, Path]:
    """Pack every object of ``repo`` (git's own repack) and drop the loose copies; the pack and its index."""
    for command in (["repack", "-a", "-d", "-q"], ["prune-packed"]):
        subprocess.run(["git", "-C", str(repo), *command], check=True, capture_output=True)
    (pack,) = (repo / ".git" / "objects" / "pack").glob("*.pack")
    return pack, pack.with_suffix(".idx")
