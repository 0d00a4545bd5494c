"""File digests remembered by stat: a remembered digest is given only for the very file it was read from.

Real files and a real SQLite cache under the test's own machine cache. Reads are counted by wrapping the module's
reader (the digest it returns is still the real one), since "not read again" has no other observable.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import digest_cache
from bench.digest_cache import file_digests
from bench.machine_cache import CACHE_VARIABLE


@pytest.fixture
def reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """This test's own cache, no racy window (files here were all just written), and each file read recorded."""
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "cache"))
    monkeypatch.setattr(digest_cache, "RACY_SECONDS", -1e9)
    read: list[Path] = []
    real = digest_cache._sha256

    def counted(path: Path) -> str:
        read.append(path)
        return real(path)

    monkeypatch.setattr(digest_cache, "_sha256", counted)
    yield read


def _digest(path: Path) -> str:
    with file_digests() as digests:
        return digests.sha256(path)


def _written(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_an_unchanged_file_is_read_once(tmp_path: Path, reads: list[Path]) -> None:
    binary = _written(tmp_path / "claude", b"the binary")
    assert _digest(binary) == hashlib.sha256(b"the binary").hexdigest()
    assert _digest(binary) == hashlib.sha256(b"the binary").hexdigest()
    assert len(reads) == 1


def test_a_same_size_rewrite_with_its_times_restored_is_read_again(tmp_path: Path, reads: list[Path]) -> None:
    binary = _written(tmp_path / "claude", b"the binary")
    before = binary.stat()
    assert _digest(binary) == hashlib.sha256(b"the binary").hexdigest()
    with binary.open("r+b") as stream:  # same inode, same size
        stream.write(b"THE")
    os.utime(binary, ns=(before.st_atime_ns, before.st_mtime_ns))  # the status-change time still moves
    assert binary.stat().st_size == before.st_size and binary.stat().st_mtime_ns == before.st_mtime_ns
    assert _digest(binary) == hashlib.sha256(b"THE binary").hexdigest()
    assert len(reads) == 2


def test_a_file_renamed_onto_the_path_is_read_again(tmp_path: Path, reads: list[Path]) -> None:
    binary = _written(tmp_path / "claude", b"the binary")
    assert _digest(binary) == hashlib.sha256(b"the binary").hexdigest()
    replacement = _written(tmp_path / "other", b"THE binary")
    os.utime(replacement, ns=(binary.stat().st_atime_ns, binary.stat().st_mtime_ns))
    replacement.replace(binary)
    assert _digest(binary) == hashlib.sha256(b"THE binary").hexdigest()
    assert len(reads) == 2


def test_a_file_changed_within_the_racy_window_is_not_remembered(
    tmp_path: Path, reads: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(digest_cache, "RACY_SECONDS", 1e9)  # every file here is "just changed"
    binary = _written(tmp_path / "claude", b"the binary")
    _digest(binary)
    _digest(binary)
    assert len(reads) == 2


def test_a_link_gives_the_file_it_reads_now(tmp_path: Path, reads: list[Path]) -> None:
    binary = _written(tmp_path / "claude", b"the binary")
    link = tmp_path / "link"
    link.symlink_to(binary)
    assert _digest(link) == hashlib.sha256(b"the binary").hexdigest()
    binary.write_bytes(b"THE binary")
    assert _digest(link) == hashlib.sha256(b"THE binary").hexdigest()


def test_an_unusable_cache_reads_every_time(tmp_path: Path, reads: list[Path]) -> None:
    (tmp_path / "cache").write_bytes(b"a file where the cache directory should be")
    binary = _written(tmp_path / "claude", b"the binary")
    assert _digest(binary) == _digest(binary) == hashlib.sha256(b"the binary").hexdigest()
    assert len(reads) == 2


def test_a_corrupt_cache_database_reads_every_time(tmp_path: Path, reads: list[Path]) -> None:
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "file-digests.sqlite").write_bytes(b"not a database" * 100)
    binary = _written(tmp_path / "claude", b"the binary")
    assert _digest(binary) == _digest(binary) == hashlib.sha256(b"the binary").hexdigest()
    assert len(reads) == 2


def test_a_missing_file_is_an_error_not_a_remembered_digest(tmp_path: Path, reads: list[Path]) -> None:
    binary = _written(tmp_path / "claude", b"the binary")
    _digest(binary)
    binary.unlink()
    with pytest.raises(FileNotFoundError):
        _digest(binary)


def test_a_tree_preloaded_gives_what_each_file_holds_now(tmp_path: Path, reads: list[Path]) -> None:
    tree = tmp_path / "npm"
    (tree / "lib").mkdir(parents=True)
    files = [_written(tree / "lib" / name, name.encode()) for name in ("a.js", "b.js")]
    outside = _written(tmp_path / "npm-other", b"beside the tree, its name sharing the prefix")
    with file_digests() as digests:
        [digests.sha256(path) for path in [*files, outside]]
    files[0].write_bytes(b"A.JS")  # same size, changed
    with file_digests() as digests:
        digests.preload(tree)
        found = [digests.sha256(path) for path in [*files, outside]]
    assert found == [hashlib.sha256(data).hexdigest() for data in (b"A.JS", b"b.js", outside.read_bytes())]
    assert reads[3:] == [files[0]]
