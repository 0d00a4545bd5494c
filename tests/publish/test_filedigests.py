"""The hashing pass's forked route (issue 18): one process forked and reaped, and its own failures refused in one
line: a bundle that changed between the two listings, a process that died, a manifest that cannot be read while
the process hashes. The digests themselves are tested on both routes in test_rehash.py."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.builder import Catalogue
from bench.errors import ContractError, SourceError
from bench.publish import filedigests, judged_beside
from bench.publish.bundle_layout import BundleError
from bench.publish.filedigests import BundleDigests
from bench.publish.manifest import PublicationManifest
from bench.publish.verification import Trust, rehash, verify
from tests.packaging.forks import reaped, recorded_forks
from tests.publish.test_rehash import _bundle


def _route(monkeypatch: pytest.MonkeyPatch, *, forked: bool) -> list[int]:
    """The route taken (the one-thread rule lifted on the forked one: other tests' loopback servers may still be
    serving from threads of this process), and the processes forked from here on."""
    monkeypatch.setattr(filedigests, "fork_is_safe", lambda: forked)
    monkeypatch.setattr(judged_beside, "fork_is_safe", lambda: forked)  # verify's shape check, forked beside it
    monkeypatch.setattr(filedigests, "FORK_MIN_FILES", 1)
    return recorded_forks(monkeypatch)


def _rehashed(manifest: PublicationManifest, root: Path) -> None:
    with BundleDigests(root) as files:
        assert rehash(manifest, files) == []


@pytest.mark.parametrize("forked", [False, True])
def test_the_forked_route_forks_one_process_and_reaps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: bool
) -> None:
    forks = _route(monkeypatch, forked=forked)
    _rehashed(_bundle(tmp_path, objects=40), tmp_path)
    assert len(forks) == int(forked) and all(reaped(pid) for pid in forks)


def test_a_small_bundle_is_hashed_here_whole_and_the_forked_process_only_lists_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forks = _route(monkeypatch, forked=True)
    monkeypatch.setattr(filedigests, "FORK_MIN_FILES", 10**6)
    hashed: list[int] = []
    digests = filedigests._digests
    monkeypatch.setattr(filedigests, "_digests", lambda root, files: hashed.append(len(files)) or digests(root, files))
    manifest = _bundle(tmp_path, objects=40)
    _rehashed(manifest, tmp_path)
    assert hashed == [len(manifest.files)] and len(forks) == 1 and reaped(forks[0])


def test_a_bundle_that_changes_between_the_two_listings_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _route(monkeypatch, forked=True)
    manifest = _bundle(tmp_path, objects=40)
    listed = filedigests.bundle_paths
    fork = os.fork

    def forked_listing_one_file_short() -> int:
        pid = fork()
        if pid == 0:  # in the forked process only: its listing misses the last file, as if removed meanwhile
            monkeypatch.setattr(filedigests, "bundle_paths", lambda root, known=None: list(listed(root, known))[:-1])
        return pid

    monkeypatch.setattr(os, "fork", forked_listing_one_file_short)
    with pytest.raises(BundleError, match=r"changed while it was verified \(files added, removed or renamed"):
        _rehashed(manifest, tmp_path)


def test_a_hashing_process_that_dies_is_an_error_naming_how(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    forks = _route(monkeypatch, forked=True)
    manifest = _bundle(tmp_path, objects=40)

    def killed(root: Path) -> Iterator[tuple[int, bytes]]:
        os.kill(os.getpid(), signal.SIGKILL)
        yield 0, b""

    monkeypatch.setattr(filedigests, "_sent", killed)
    with pytest.raises(SourceError, match=r"re-hashing its files stopped before sending their digests \(killed by"):
        _rehashed(manifest, tmp_path)
    assert len(forks) == 1 and reaped(forks[0])


@pytest.mark.parametrize("forked", [False, True])
def test_a_manifest_that_cannot_be_read_stops_and_reaps_the_forked_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: bool
) -> None:
    """verify forks two: one re-hashing, one checking the bundle's shape; a refusal here stops and reaps both."""
    forks = _route(monkeypatch, forked=forked)
    _bundle(tmp_path, objects=40)
    (tmp_path / "MANIFEST.json").write_bytes(b"{not json")
    with pytest.raises(ContractError, match=r"MANIFEST\.json"):
        verify(tmp_path / "MANIFEST.json", Catalogue([]), Trust(unsigned=True))
    assert len(forks) == 2 * int(forked) and all(reaped(pid) for pid in forks)
