"""The corpus stage: exactly `git archive`'s tree, from git objects only; every crafted input refused by path."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from dulwich.objects import Blob, Commit, Tag, Tree
from dulwich.repo import Repo

from bench.builder import StageContext
from bench.builder.execution import execute
from bench.contracts import Digest
from bench.packaging import (
    CommitNotFound,
    CorpusError,
    GitSource,
    MaterializationReceipt,
    corpus_params,
    materialize,
    open_source,
)
from bench.packaging.gitsource import GitSourceCorrupt
from bench.run.catalogue import services
from bench.stages.corpus import corpus
from bench.store import EntryKind, Store, tree_from_directory, walk_tree
from tests.packaging.gitrepos import EXECUTABLE, GITLINK, SYMLINK, RepoFactory, commit_tree

ORDINARY = {
    "README.md": b"# project\n",
    "src/main.py": b"print('hello')\n",
    "src/pkg/__init__.py": b"",
    "bin/run": (EXECUTABLE, b"#!/bin/sh\nexec python3 src/main.py\n"),
    "docs/caf\u00e9 menu.txt": b"unicode and a space\n",
    "docs/logo.bin": (0o100644, bytes(range(256)) * 4),
    "docs/current": (SYMLINK, b"../src/main.py"),
    "lib": (SYMLINK, b"src/pkg"),
    "dangling": (SYMLINK, b"not/here"),
}


def _corpus(store: Store, repository: Path | str, commit: str) -> MaterializationReceipt:
    with open_source(str(repository)) as source:
        return materialize(store, source, commit)


def test_the_tree_is_exactly_git_archive_of_the_commit(store: Store, make_repo: RepoFactory, tmp_path: Path) -> None:
    repo, commit = make_repo(ORDINARY)
    receipt = _corpus(store, repo, commit)
    extracted = tmp_path / "archive"
    extracted.mkdir()
    archive = subprocess.run(["git", "-C", str(repo), "archive", commit], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(extracted)], input=archive, check=True)
    assert receipt.tree == tree_from_directory(store, extracted)
    entries = {path: (entry.kind, store.get_bytes(entry.digest)) for path, entry in walk_tree(store, receipt.tree)}
    assert entries["bin/run"] == (EntryKind.EXECUTABLE, b"#!/bin/sh\nexec python3 src/main.py\n")
    assert entries["docs/current"] == (EntryKind.SYMLINK, b"../src/main.py")
    assert entries["lib"] == (EntryKind.SYMLINK, b"src/pkg")
    assert entries["docs/logo.bin"][1] == bytes(range(256)) * 4
    assert (receipt.files, receipt.symlinks, receipt.commit) == (6, 3, commit)
    assert receipt.total_bytes == sum(
        len(v[1] if isinstance(v, tuple) else v)
        for k, v in ORDINARY.items()
        if k not in ("docs/current", "lib", "dangling")
    )


def test_a_ref_is_resolved_and_recorded_and_a_full_id_is_used_as_is(make_repo: RepoFactory) -> None:
    repo, commit = make_repo({"a.txt": b"a\n"})
    with Repo(str(repo)) as handle:
        tag = Tag()
        tag.name, tag.object, tag.message = b"v1", (Commit, commit.encode()), b"release\n"
        tag.tagger, tag.tag_time, tag.tag_timezone = b"Dev <dev@example.org>", 1_700_000_000, 0
        handle.object_store.add_object(tag)
        handle.refs[b"refs/tags/v1"] = tag.id
        tree = handle[commit.encode()].tree.decode()
    for spec in ("main", "refs/heads/main", "HEAD", "v1", commit, commit.upper()):
        assert corpus_params(str(repo), spec).commit == commit
    with pytest.raises(CommitNotFound, match="abbreviated"):
        corpus_params(str(repo), commit[:12])
    with pytest.raises(CommitNotFound, match="neither a full commit id nor a ref"):
        corpus_params(str(repo), "no-such-branch")
    with pytest.raises(CommitNotFound, match="not a commit"):
        corpus_params(str(repo), tree)
    with pytest.raises(CommitNotFound, match="not in"):
        corpus_params(str(repo), "0" * 40)


def test_a_bundle_gives_the_same_tree_as_its_repository(store: Store, make_repo: RepoFactory, tmp_path: Path) -> None:
    repo, commit = make_repo(ORDINARY)
    bundle = tmp_path / "project.bundle"
    subprocess.run(["git", "-C", str(repo), "bundle", "create", str(bundle), "main"], check=True, capture_output=True)
    params = corpus_params(str(bundle), "main")
    assert params.commit == commit
    assert _corpus(store, bundle, commit).tree == _corpus(store, repo, commit).tree


def test_lfs_pointers_are_kept_and_reported(store: Store, make_repo: RepoFactory) -> None:
    oid = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393"
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize 12345\n".encode()
    repo, commit = make_repo({"assets/model.bin": pointer, "a.txt": b"a\n"})
    receipt = _corpus(store, repo, commit)
    assert [(p.path, p.oid, p.size) for p in receipt.lfs_pointers] == [("assets/model.bin", oid, 12345)]


CRAFTED = [
    pytest.param({"vendor/lib": (GITLINK, b"1" * 40)}, {}, "vendor/lib", "submodule", id="gitlink"),
    pytest.param({}, {b".git": b"[core]\n"}, ".git", "named .git", id="dot-git"),
    pytest.param({"sub/.GIT/config": b"[core]\n"}, {}, "sub/.GIT", "named .git", id="dot-git-nested-uppercase"),
    pytest.param({}, {b"..": b"x"}, "..", "crafted", id="dot-dot"),
    pytest.param({}, {b"a/b": b"x"}, "a/b", "crafted", id="slash"),
    pytest.param({}, {b"caf\xe9.txt": b"x"}, "caf\\xe9.txt", "not UTF-8", id="non-utf8"),
    pytest.param({"etc": (SYMLINK, b"/etc/passwd")}, {}, "etc", "absolute", id="absolute-symlink"),
    pytest.param({"docs/up": (SYMLINK, b"../../secret")}, {}, "docs/up", "outside", id="escaping-symlink"),
    pytest.param(
        {"dir/up": (SYMLINK, b".."), "dir/link": (SYMLINK, b"up/../x")}, {}, "dir/link", "outside", id="escape-via-link"
    ),
    pytest.param({"a": (SYMLINK, b"b"), "b": (SYMLINK, b"a")}, {}, "a", "loop", id="symlink-loop"),
]


@pytest.mark.parametrize(("files", "verbatim", "path", "reason"), CRAFTED)
def test_crafted_trees_are_refused_by_path_and_nothing_is_stored(
    store: Store, make_repo: RepoFactory, files: dict, verbatim: dict, path: str, reason: str
) -> None:
    marker = b"stored only if the tree were accepted: " + path.encode()
    repo, commit = make_repo({"0-first.txt": marker, **files}, verbatim=verbatim)
    with pytest.raises(CorpusError, match=reason) as refused:
        _corpus(store, repo, commit)
    assert refused.value.path == path
    assert not store.has(Digest.of(marker))


def test_a_missing_blob_is_refused_and_no_partial_tree_is_stored(store: Store, make_repo: RepoFactory) -> None:
    repo, commit = make_repo({"a.txt": b"present\n", "z/late.txt": b"missing\n"}, skip_blobs=frozenset({b"missing\n"}))
    with pytest.raises(CorpusError, match="missing") as refused:
        _corpus(store, repo, commit)
    assert refused.value.path == "z/late.txt"
    assert not store.has(Digest.of(b"present\n"))


def test_a_tree_object_that_does_not_parse_is_refused_by_path(store: Store, tmp_path: Path) -> None:
    # A name holding NUL: the tree format ends a name at NUL, so its bytes no longer parse as a tree. Written
    # with dulwich, the shape a corrupt or hostile repository could hand over.
    blob = Blob.from_string(b"x")
    sub = Tree()
    sub.add(b"a\x00b", 0o100644, blob.id)
    tree = Tree()
    tree.add(b"dir", 0o040000, sub.id)
    commit = Commit()
    commit.tree, commit.author, commit.committer = tree.id, b"D <d@e>", b"D <d@e>"
    commit.author_time = commit.commit_time = commit.author_timezone = commit.commit_timezone = 0
    commit.message = b"m"
    repo = Repo.init(str(tmp_path / "repo"), mkdir=True)
    for obj in (blob, sub, tree, commit):
        repo.object_store.add_object(obj)
    source = GitSource("hostile", repo.object_store, lambda name: None)
    with pytest.raises(GitSourceCorrupt, match=rf"hostile: object {sub.id.decode()} \(dir\) cannot be read"):
        materialize(store, source, commit.id.decode())
    assert list(store.digests()) == []


def test_the_stage_runs_once_and_is_cached_after(store: Store, make_repo: RepoFactory) -> None:
    repo, commit = make_repo({"a.txt": b"a\n"})
    params = corpus_params(str(repo), "main")
    first = execute(StageContext(store, services()), corpus, {}, params)
    second = execute(StageContext(store, services()), corpus, {}, params)
    assert (first.executed, second.executed) == (True, False)
    assert first.outputs == second.outputs
    receipt = store.get_document(first.outputs["receipt"], MaterializationReceipt)
    assert (receipt.repository, receipt.commit, receipt.tree) == (repo.name, commit, first.outputs["tree"])


def test_a_bundle_of_a_range_lacks_objects_and_is_refused_by_path(
    store: Store, make_repo: RepoFactory, tmp_path: Path
) -> None:
    repo, first = make_repo({"kept.txt": b"unchanged\n", "a.txt": b"one\n"})
    with Repo(str(repo)) as handle:
        tree = handle[first.encode()].tree
        blob = Blob.from_string(b"two\n")
        handle.object_store.add_object(blob)
        changed = handle[tree]
        changed.add(b"a.txt", 0o100644, blob.id)
        handle.object_store.add_object(changed)
        second = commit_tree(handle, changed.id, parents=(first,))
    bundle = tmp_path / "range.bundle"
    subprocess.run(
        ["git", "-C", str(repo), "bundle", "create", str(bundle), f"{first}..main"], check=True, capture_output=True
    )
    with pytest.raises(CorpusError, match="missing") as refused:
        _corpus(store, bundle, second)
    assert refused.value.path == "kept.txt"
