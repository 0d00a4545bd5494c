"""A pack's entries inflated with one call each, for the entries git writes: whole objects and offset deltas.

dulwich reads a pack entry through about 15 us of Python per object (its header a byte at a time, an
``UnpackedObject``, 64 KiB slices, a locked cache) and inflates with zlib: on the benchmark's corpus of 12,370
entries that was 0.39-0.51 s, of which zlib's inflate 0.21 s (issue 18). Read in pack order, as a corpus reads, an
entry here costs its header, one inflate call over a slice bounded by the size its header declares, and for a delta
dulwich's ``apply_delta`` (its C extension) against a base kept from a moment ago; the inflate is ISA-L's
(``isal``), the same deflate at 0.095 s for those entries: 0.24-0.30 s with zlib, about 0.14 s with ISA-L.

dulwich stays the reader of record. Anything this path does not read plainly (a ``REF_DELTA``, a header or stream
that does not hold what it declares, a base offset outside the pack) is ``None`` here, and the caller reads that
object through dulwich, which refuses what is damaged with its own errors. Whichever path read them, the caller
checks an object's bytes against its SHA-1 name, so this path can miss the common case, never change an answer.
"""

from __future__ import annotations

import mmap
from collections import OrderedDict
from typing import cast

from dulwich.pack import apply_delta
from isal import isal_zlib

__all__ = ["PackEntries"]

_PACK_HEADER = 12  # "PACK", version, object count: no entry starts before it
_OFS_DELTA = 6
_WHOLE = frozenset({1, 2, 3, 4})  # commit, tree, blob, tag
_MAX_SHIFT = 70  # a size or offset of more than 64 bits is not one git wrote
_INFLATE_ERROR = cast(type[Exception], isal_zlib.error)  # a class, which isal's stub declares as an instance


def _bound(size: int) -> int:
    """The most bytes a zlib stream of ``size`` bytes spans as zlib writes it (its ``compressBound``, plus slack):
    the slice handed to zlib, so it neither reads the rest of the pack nor copies it as unused data."""
    return size + (size >> 12) + (size >> 14) + (size >> 25) + 64


class PackEntries:
    """Entries of the pack file at ``path``, by offset; ``read`` gives the type number and bytes of the object
    there, or None where dulwich should read it. Resolved objects are kept, the most recently used first, up to
    ``cache_limit`` bytes, since a delta's base lies just before it in pack order; the mapping's pages are given
    back after every ``resident_limit`` bytes read, so memory stays flat as a pack is read front to back."""

    def __init__(self, path: str, cache_limit: int, resident_limit: int) -> None:
        with open(path, "rb") as handle:
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        self._view = memoryview(self._map)
        self._cache: OrderedDict[int, tuple[int, bytes]] = OrderedDict()
        self._cached = 0
        self._cache_limit = cache_limit
        self._resident_limit = resident_limit
        self._read_since = 0

    def close(self) -> None:
        self._view.release()
        self._map.close()

    def read(self, offset: int) -> tuple[int, bytes] | None:
        """The type number and bytes of the object whose entry starts at ``offset``, its deltas applied."""
        deltas: list[tuple[int, bytes]] = []  # (offset, delta) from the object down to its nearest kept base
        at = offset
        while (found := self._cache.get(at)) is None:
            entry = self._entry(at)
            if entry is None:
                return None
            type_num, base, data = entry
            if base is None:
                found = (type_num, data)
                self._keep(at, found)
                break
            deltas.append((at, data))
            at = base
        self._cache.move_to_end(at)
        type_num, data = found
        for at, delta in reversed(deltas):
            try:
                data = b"".join(apply_delta(data, delta))
            except Exception:  # a delta that does not apply to its base: dulwich says how
                return None
            self._keep(at, (type_num, data))
        self._read_since += len(data)
        if self._read_since >= self._resident_limit:
            self._map.madvise(mmap.MADV_DONTNEED)
            self._read_since = 0
        return type_num, data

    def _entry(self, at: int) -> tuple[int, int | None, bytes] | None:
        """The type number, base offset (None unless an offset delta) and inflated bytes of the entry at ``at``."""
        contents = self._map
        try:
            byte = contents[at]
            type_num, size, shift, pos = (byte >> 4) & 7, byte & 15, 4, at + 1
            while byte & 0x80 and shift < _MAX_SHIFT:
                byte = contents[pos]
                size |= (byte & 0x7F) << shift
                shift, pos = shift + 7, pos + 1
            if shift >= _MAX_SHIFT:
                return None
            base = None
            if type_num == _OFS_DELTA:
                byte = contents[pos]
                back, pos = byte & 0x7F, pos + 1
                while byte & 0x80 and back < at:
                    byte = contents[pos]
                    back, pos = ((back + 1) << 7) | (byte & 0x7F), pos + 1
                base = at - back
                if not _PACK_HEADER <= base < at:
                    return None
            elif type_num not in _WHOLE:
                return None
            inflater = isal_zlib.decompressobj()
            data = inflater.decompress(self._view[pos : pos + _bound(size)], size + 1)
        except (IndexError, _INFLATE_ERROR):
            return None
        if not inflater.eof or len(data) != size:
            return None
        return type_num, base, data

    def _keep(self, at: int, found: tuple[int, bytes]) -> None:
        self._cache[at] = found
        self._cached += len(found[1])
        while self._cached > self._cache_limit and len(self._cache) > 1:
            self._cached -= len(self._cache.popitem(last=False)[1][1])
