"""The digest of every file of a published bundle, re-hashed on both cores, begun before its manifest is read.

Verification's hashing pass reads the manifest and then reads and BLAKE3-hashes every file of the bundle; in one
process that was 0.20 s and 0.52 s for 32,000 files and 338 MB, where `b3sum --check` took 0.48 s (issue 18).
Entering :class:`BundleDigests` forks a process (:func:`bench.forking.forked`) that lists the bundle and re-hashes
two of every three files while this one reads and checks the manifest; :meth:`BundleDigests.digests` then lists the
bundle here (with the manifest's paths, checked already), re-hashes the rest and takes the forked process's
digests, with a digest of its listing: a bundle whose files changed between the two listings is refused, never
half hashed.

The digests are the same on either route and so are the refusals: a listing this process makes raises the same
:class:`~bench.publish.bundle_layout.BundleError` first, a file that cannot be read there is refused here as the same
error, a process that stops before sending its digests is a one-line error naming how it ended, and it is killed
and reaped when this side fails (a manifest that cannot be read, say). A process running a second thread
(:func:`~bench.forking.fork_is_safe`) hashes every file itself, and so does either process for a small bundle.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType

from ..contracts import Digest, PortablePath
from ..errors import SourceError
from ..forking import Child, Frame, fork_is_safe, forked
from .bundle_layout import BundleError, bundle_paths, read_bundle_file

__all__ = ["FORK_MIN_FILES", "BundleDigests"]

FORK_MIN_FILES = 512  # fewer are hashed here alone: a fork costs about what 200 files' reading and hashing do
# Of every three files, this process hashes the first and the forked one the other two: the forked one begins
# while the manifest is read here (for 32,000 files the manifest takes 0.2 s, listing and hashing 0.5 s).
_EVERY = 3

Listed = Sequence[tuple[PortablePath, str]]  # a bundle file's path, and where it lies on this machine


class BundleDigests:
    """The digest of each file of the bundle at ``root``, by path (:meth:`digests`); a forked process begins on
    two of every three files when this is entered."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._stack = ExitStack()
        self._child: Child | None = None

    def __enter__(self) -> BundleDigests:
        if fork_is_safe():
            self._child = self._stack.enter_context(forked(lambda: _sent(self.root), self._ended, _unsendable))
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._stack.__exit__(kind, exc, traceback)

    def digests(self, listed: Mapping[str, PortablePath] | None = None) -> dict[PortablePath, Digest]:
        """Each file's digest; ``listed`` as for :func:`~bench.publish.bundle_layout.bundle_paths`."""
        files = list(bundle_paths(self.root, listed))
        if self._child is None or len(files) < FORK_MIN_FILES:
            digests = _digests(self.root, files)
            if self._child is not None:
                self._received(files)
            return digests
        digests = _digests(self.root, files[::_EVERY])
        theirs = (path for path, _ in _theirs(files))
        digests.update(zip(theirs, map(Digest, self._received(files)), strict=True))
        return digests

    def _received(self, files: Listed) -> list[str]:
        """The digests the forked process sends, refused unless its listing was ``files``."""
        assert self._child is not None
        [(_, data)] = list(self._child.frames(1))
        listing, *digests = data.decode("ascii").split("\n")
        if listing != _listing(files):
            raise BundleError(
                str(self.root),
                "changed while it was verified (files added, removed or renamed between two listings of it); "
                "verify a bundle nothing is writing to",
            )
        return digests

    def _ended(self, how: str) -> SourceError:
        return SourceError(
            f"{self.root}: the process re-hashing its files stopped before sending their digests ({how})",
            path=str(self.root),
            hint="nothing was verified; run again, and if it recurs check the machine's memory limits (dmesg)",
        )


def _digests(root: Path, files: Listed) -> dict[PortablePath, Digest]:
    return {path: Digest.of(read_bundle_file(root, where)) for path, where in files}


def _theirs(files: Listed) -> Listed:
    """The files the forked process hashes: two of every three."""
    return [file for index, file in enumerate(files) if index % _EVERY]


def _listing(files: Listed) -> str:
    """A digest of the paths listed, in order: what the two processes compare."""
    return Digest.of("\n".join(path for path, _ in files).encode("utf-8"))


def _sent(root: Path) -> Iterator[Frame]:
    """The forked process's work: the bundle listed, and (when it is not small) its share's digests, in order, as
    one frame of lines after the listing's digest."""
    files = list(bundle_paths(root))
    hashed = _theirs(files) if len(files) >= FORK_MIN_FILES else []
    yield 0, "\n".join([_listing(files), *_digests(root, hashed).values()]).encode("ascii")


def _unsendable(exc: Exception) -> SourceError:
    return SourceError(f"re-hashing a bundle's files failed: {type(exc).__name__}: {exc}")
