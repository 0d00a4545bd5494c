"""A judgement of a bundle's files made in a forked process while this one goes on (:mod:`bench.forking`).

``verify`` re-derives the bundle's deterministic actions in this process and checks its shape (complete, closed,
bound) in a second one: each is about half of verifying a bundle. The second process is forked on entering, while
this process still runs one thread (re-hashing starts BLAKE3's worker threads, after which nothing is forked), and
reads the bundle for itself; its answer counts only for the files this process read, and is refused otherwise. Where
forking is not safe, the judgement is made here, when :meth:`JudgedBeside.here` is called.
"""

from __future__ import annotations

import contextlib
import pickle
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Generic, TypeVar, cast

from ..contracts import Digest, PortablePath
from ..errors import SourceError
from ..forking import Child, Frame, fork_is_safe, forked
from .bundle_layout import BundleError, bundle_files

__all__ = ["Files", "JudgedBeside"]

T = TypeVar("T")
Files = Mapping[PortablePath, bytes]


class JudgedBeside(Generic[T]):
    """``judge(files)`` of the bundle at ``root``, which answers the identity of the files it judged (their paths
    and digests) and what it found; ``what`` names the judgement in errors."""

    def __init__(self, root: Path, what: str, judge: Callable[[Files], tuple[Digest, T]]) -> None:
        self.root = root
        self.what = what
        self.judge = judge
        self._stack = contextlib.ExitStack()
        self._child: Child | None = None
        self._here: tuple[Digest, T] | None = None

    def __enter__(self) -> JudgedBeside[T]:
        if fork_is_safe():
            self._child = self._stack.enter_context(forked(self._sent, self._ended, self._unsendable))
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._stack.__exit__(kind, exc, traceback)

    def _sent(self) -> Iterator[Frame]:
        """The forked process's work: the bundle read and judged, sent as one frame."""
        yield 0, pickle.dumps(self.judge(bundle_files(self.root)))

    def here(self, files: Files) -> None:
        """Judge ``files`` in this process now, unless a forked process judges them."""
        if self._child is None:
            self._here = self.judge(files)

    def found(self, identity: Digest) -> T:
        """What was found in the files whose identity is ``identity``: those this process read."""
        if self._child is None:
            assert self._here is not None, "here() comes before found()"
            return self._here[1]
        [(_, data)] = list(self._child.frames(1))
        judged, found = pickle.loads(data)  # from the process this one forked, over its own pipe
        if judged != identity:
            raise BundleError(
                str(self.root),
                "changed while it was verified (two readings of its files differ); verify a bundle nothing is "
                "writing to",
            )
        return cast(T, found)

    def _ended(self, how: str) -> SourceError:
        return SourceError(
            f"{self.root}: the process checking {self.what} stopped before sending what it found ({how})",
            path=str(self.root),
            hint="nothing was verified; run again, and if it recurs check the machine's memory limits (dmesg)",
        )

    def _unsendable(self, exc: Exception) -> SourceError:
        return SourceError(f"{self.root}: checking {self.what} failed: {type(exc).__name__}: {exc}")
