"""A minimal PNG reader (stdlib zlib and struct) for checking what a headless browser drew."""

from __future__ import annotations

import struct
import zlib
from collections import Counter

__all__ = ["colour_bands", "colour_counts"]

_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # colour type -> samples per pixel (8-bit only)


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def _unfilter(raw: bytes, width: int, height: int, bpp: int) -> list[bytearray]:
    stride = width * bpp
    rows: list[bytearray] = []
    previous = bytearray(stride)
    position = 0
    for _ in range(height):
        kind, line = raw[position], bytearray(raw[position + 1 : position + 1 + stride])
        position += 1 + stride
        if kind == 0:
            pass
        elif kind == 2:  # "up" needs no left neighbour: one pass over the row
            line = bytearray((a + b) & 0xFF for a, b in zip(line, previous, strict=True))
        else:
            _unfilter_sequential(line, previous, kind, bpp)
        rows.append(line)
        previous = line
    return rows


def _unfilter_sequential(line: bytearray, previous: bytearray, kind: int, bpp: int) -> None:
    """Sub (1), average (3) and Paeth (4) depend on the already decoded left neighbour: byte by byte."""
    for i in range(len(line)):
        left = line[i - bpp] if i >= bpp else 0
        up, corner = previous[i], previous[i - bpp] if i >= bpp else 0
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
        else:
            line[i] = (line[i] + _paeth(left, up, corner)) & 0xFF


def _decode(data: bytes) -> tuple[list[bytearray], int, int]:
    """The unfiltered rows of an 8-bit, non-interlaced PNG, its width and its bytes per pixel."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, idat, header = 8, b"", b""
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        header = body if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        position += 12 + length
    width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and interlace == 0 and colour_type in _CHANNELS, (depth, colour_type, interlace)
    bpp = _CHANNELS[colour_type]
    return _unfilter(zlib.decompress(idat), width, height, bpp), width, bpp


def colour_counts(data: bytes, step: int = 3, across: tuple[float, float] = (0.0, 1.0)) -> Counter[tuple[int, ...]]:
    """How often each RGB colour occurs on a grid of every ``step``-th pixel of an 8-bit, non-interlaced PNG;
    ``across`` limits it to a band of the width (fractions: (0.0, 0.5) is the left half)."""
    rows, width, bpp = _decode(data)
    counts: Counter[tuple[int, ...]] = Counter()
    for row in rows[::step]:
        for x in range(int(width * across[0]), int(width * across[1]), step):
            counts[tuple(row[x * bpp : x * bpp + min(bpp, 3)])] += 1
    return counts


def colour_bands(data: bytes, colour: tuple[int, int, int], least: int = 8) -> list[tuple[int, int]]:
    """The horizontal bands (first row, last row) where at least ``least`` pixels of a row are ``colour``:
    one per mark drawn across the image, such as each comparison's interval on an effect chart."""
    rows, width, bpp = _decode(data)
    wanted = bytes(colour)
    bands: list[tuple[int, int]] = []
    for y, row in enumerate(rows):
        hits = sum(row[x * bpp : x * bpp + 3] == wanted for x in range(width))
        if hits < least:
            continue
        if bands and bands[-1][1] == y - 1:
            bands[-1] = (bands[-1][0], y)
        else:
            bands.append((y, y))
    return bands
