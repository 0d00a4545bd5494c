from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

import pytest

from bench.contracts import PortablePath, canonical_bytes
from bench.errors import ContractError, SourceError
from bench.store import (
    EntryKind,
    FileEntry,
    Store,
    TreeObject,
    export_tree,
    tree_from_directory,
    tree_from_entries,
    tree_from_tar,
    walk_tree,
    write_tar,
)


def _sample(root: Path) -> Path:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "mod.py").write_text("print('hi')\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    os.symlink("src/pkg/mod.py", root / "link")
    (root / "empty").mkdir()
    return root


def test_tree_from_directory_keeps_kinds_sizes_and_targets(store: Store, tmp_path: Path) -> None:
    tree = tree_from_directory(store, _sample(tmp_path / "s"))
    entries = {str(path): entry for path, entry in walk_tree(store, tree)}
    assert list(entries) == ["empty", "link", "run.sh", "src", "src/pkg", "src/pkg/mod.py"]
    assert entries["run.sh"].kind is EntryKind.EXECUTABLE
    assert entries["link"].kind is EntryKind.SYMLINK
    assert store.get_bytes(entries["link"].digest) == b"src/pkg/mod.py"
    assert entries["src"].size == len("print('hi')\n")
    top = store.get_document(tree, TreeObject)
    assert [entry.name for entry in top.entries] == sorted(entry.name for entry in top.entries)


def test_the_same_content_gives_the_same_digest_from_every_source(store: Store, tmp_path: Path) -> None:
    source = _sample(tmp_path / "s")
    from_disk = tree_from_directory(store, source)
    tar_bytes = subprocess.run(["tar", "-cf", "-", "-C", str(source), "."], capture_output=True, check=True).stdout
    assert tree_from_tar(store, io.BytesIO(tar_bytes)) == from_disk
    stream = io.BytesIO()
    write_tar(store, from_disk, stream, prefix="workspace", uid=1000, gid=1000)
    stream.seek(0)
    assert tree_from_tar(store, stream, strip="workspace") == from_disk
    export_tree(store, from_disk, tmp_path / "out")
    assert tree_from_directory(store, tmp_path / "out") == from_disk
    entries = [
        FileEntry(PortablePath("src/pkg/mod.py"), EntryKind.FILE, b"print('hi')\n"),
        FileEntry(PortablePath("run.sh"), EntryKind.EXECUTABLE, b"#!/bin/sh\n"),
        FileEntry(PortablePath("link"), EntryKind.SYMLINK, b"src/pkg/mod.py"),
        FileEntry(PortablePath("empty"), EntryKind.DIRECTORY, b""),
    ]
    assert tree_from_entries(store, entries) == from_disk


def test_write_tar_is_deterministic(store: Store, tmp_path: Path) -> None:
    tree = tree_from_directory(store, _sample(tmp_path / "s"))
    first, second = io.BytesIO(), io.BytesIO()
    write_tar(store, tree, first)
    write_tar(store, tree, second)
    assert first.getvalue() == second.getvalue()


def test_conflicting_entries_are_refused(store: Store) -> None:
    with pytest.raises(ContractError, match="'a' is both a file and a directory"):
        tree_from_entries(
            store,
            [FileEntry(PortablePath("a"), EntryKind.FILE, b""), FileEntry(PortablePath("a/b"), EntryKind.FILE, b"")],
        )
    with pytest.raises(ContractError, match="appears twice"):
        tree_from_entries(
            store,
            [FileEntry(PortablePath("a"), EntryKind.FILE, b"1"), FileEntry(PortablePath("a"), EntryKind.FILE, b"2")],
        )


def test_special_files_and_escaping_tar_members_are_refused(store: Store, tmp_path: Path) -> None:
    source = tmp_path / "s"
    source.mkdir()
    os.mkfifo(source / "pipe")
    with pytest.raises(SourceError, match="pipe"):
        tree_from_directory(store, source)
    stream = io.BytesIO()
    import tarfile

    with tarfile.open(fileobj=stream, mode="w") as archive:
        archive.addfile(tarfile.TarInfo("../escape"), io.BytesIO(b""))
    stream.seek(0)
    with pytest.raises(SourceError, match=r"\.\./escape"):
        tree_from_tar(store, stream)


def test_export_refuses_a_non_empty_destination(store: Store, tmp_path: Path) -> None:
    tree = tree_from_directory(store, _sample(tmp_path / "s"))
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "keep").write_text("mine")
    with pytest.raises(ContractError, match="not empty"):
        export_tree(store, tree, tmp_path / "busy")
    assert (tmp_path / "busy" / "keep").read_text() == "mine"


def test_directory_objects_are_the_canonical_bytes_of_their_contract(store: Store, tmp_path: Path) -> None:
    # The builder encodes directory objects from plain values; each must be exactly its TreeObject's bytes.
    source = _sample(tmp_path / "s")
    for index in range(2500):  # more leaves than one bulk write holds
        (source / "src" / f"f{index:04}.txt").write_bytes(f"file {index}\n".encode() * (index % 700))
    tree = tree_from_directory(store, source)
    directories = [tree] + [entry.digest for _, entry in walk_tree(store, tree) if entry.kind is EntryKind.DIRECTORY]
    for digest in directories:
        assert store.get_bytes(digest) == canonical_bytes(store.get_document(digest, TreeObject))
        assert store.is_document(digest)
    entries = {str(path): entry for path, entry in walk_tree(store, tree)}
    assert entries["src/f2499.txt"].size == len(b"file 2499\n") * (2499 % 700)
    assert store.get_bytes(entries["src/f0700.txt"].digest) == b""


def test_walk_tree_lists_directories_before_their_contents_in_name_order(store: Store) -> None:
    names = ["a/b/c", "a/b.txt", "a/c/d", "b", "a.txt", "a/a"]
    tree = tree_from_entries(store, [FileEntry(PortablePath(name), EntryKind.FILE, name.encode()) for name in names])
    walked = [str(path) for path, _ in walk_tree(store, tree)]
    assert walked == ["a", "a/a", "a/b", "a/b/c", "a/b.txt", "a/c", "a/c/d", "a.txt", "b"]
