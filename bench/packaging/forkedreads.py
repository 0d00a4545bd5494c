"""A corpus's git objects read in a forked second process (:func:`read_forked`), so inflating them uses a second
core while this process stores them; :func:`interleaved` mixes in the share this process reads itself.

The reader inherits the opened repository, reads the listed objects through the same
:meth:`~bench.packaging.gitsource.GitSource.read_located`, with the same checks (each object hashed against its
name), and streams them back in the order listed. The fork, the pipe, the refusals and the reaping are
:func:`bench.forking.forked`'s: a damaged object found there is raised here as the same refusal, a reader that
stops before sending everything is a :class:`~bench.errors.SourceError` naming how it ended, and nothing is
stored.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import TypeVar

from ..errors import SourceError
from ..forking import Frame, forked

__all__ = ["Found", "interleaved", "read_forked"]

Found = tuple[int, bytes] | None  # an object's type number and bytes; None when the repository lacks it
T = TypeVar("T")
_MISSING = -1  # the frame code of a git object the repository lacks (a type number is 1-7)


def read_forked(
    repository: str, keys: Sequence[bytes], read: Callable[[], Iterable[tuple[bytes, Found]]]
) -> Generator[tuple[bytes, Found], None, None]:
    """What ``read()`` yields for ``keys`` (one item per key, in order), read in a forked process."""

    def frames() -> Iterator[Frame]:
        for _, found in read():
            yield (_MISSING, b"") if found is None else found

    def ended(how: str) -> SourceError:
        return SourceError(
            f"{repository}: the process reading its objects stopped before sending them all ({how})",
            path=repository,
            hint="nothing was stored; run again, and if it recurs check the machine's memory limits (dmesg)",
        )

    def unsendable(exc: Exception) -> SourceError:
        return SourceError(f"reading git objects failed: {type(exc).__name__}: {exc}")

    with forked(frames, ended, unsendable) as child:
        for key, (code, data) in zip(keys, child.frames(len(keys)), strict=True):
            yield key, None if code == _MISSING else (code, data)


def interleaved(first: Generator[T, None, None], second: Iterator[T], firsts: int, seconds: int) -> Iterator[T]:
    """The ``firsts`` items of ``first`` and the ``seconds`` of ``second``, mixed evenly (each drawn while its
    share of what was drawn is behind); ``first`` is closed (its reader stopped) however this ends."""
    drawn_first = drawn_second = 0
    try:
        while drawn_first < firsts or drawn_second < seconds:
            if drawn_second >= seconds or (drawn_first < firsts and drawn_first * seconds <= drawn_second * firsts):
                yield next(first)
                drawn_first += 1
            else:
                yield next(second)
                drawn_second += 1
        for extra in (first, second):  # each must end where its count says: the forked reader checks its end
            for _ in extra:
                raise AssertionError("more items than counted")
    finally:
        first.close()
