"""Pack entries inflated here (issue 18): the same objects dulwich reads, or None where dulwich must read them.

Real packs written by git's own repack (with offset deltas, and with ref deltas), read entry by entry against
dulwich's own reading; and packs written byte by byte, to craft what git never writes.
"""

from __future__ import annotations

import subprocess
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from dulwich.pack import create_delta
from dulwich.repo import Repo

from bench.packaging import materialize, open_source
from bench.packaging.packentries import PackEntries
from bench.store import Store
from tests.packaging.gitrepos import RepoFactory

# Versions of one text, so git's repack stores most of them as deltas of one another, some in chains.
FILES = {
    f"dir{i % 4}/file{i:02}.txt": b"".join(
        b"line %d of a shared text, version %d\n" % (n, n % (i + 1)) for n in range(60)
    )
    for i in range(40)
}
OFS_DELTA, REF_DELTA, BLOB = 6, 7, 3


def _repacked(repo: Path, *options: str) -> Path:
    """Pack every object of ``repo`` with git's repack and ``options``; the pack's path."""
    command = ["git", "-C", str(repo), *options, "repack", "-a", "-d", "-f", "-q", "--window=50", "--depth=50"]
    subprocess.run(command, check=True, capture_output=True)
    subprocess.run(["git", "-C", str(repo), "prune-packed"], check=True, capture_output=True)
    (pack,) = (repo / ".git" / "objects" / "pack").glob("*.pack")
    return pack


def _dulwich_objects(repo: Path) -> Iterator[tuple[int, int, bytes]]:
    """(offset, type number, bytes) of every entry of the repository's one pack as dulwich reads and resolves
    them, in pack order."""
    with Repo(str(repo)) as handle:
        (pack,) = handle.object_store.packs
        for offset in sorted(offset for _, offset, _ in pack.index.iterentries()):
            type_num, obj = pack.data.get_object_at(offset)
            type_num, chunks = pack.resolve_object(offset, type_num, obj)
            yield offset, type_num, b"".join(chunks)  # type: ignore[arg-type]


def _entry_types(pack_path: Path, offsets: list[int]) -> list[int]:
    data = pack_path.read_bytes()
    return [(data[offset] >> 4) & 7 for offset in offsets]


@pytest.mark.parametrize("cache_limit", [1 << 20, 1])
@pytest.mark.parametrize("order", ["pack", "reversed"])
def test_every_entry_of_a_repacked_repository_reads_as_dulwich_reads_it(
    make_repo: RepoFactory, cache_limit: int, order: str
) -> None:
    # "reversed" asks for each delta before its base, and a one-byte cache keeps no base: every chain is walked
    # from its whole object, however far back.
    repo, _ = make_repo(FILES)
    pack_path = _repacked(repo)
    expected = list(_dulwich_objects(repo))
    assert _entry_types(pack_path, [offset for offset, _, _ in expected]).count(OFS_DELTA) >= 20
    entries = PackEntries(str(pack_path), cache_limit, resident_limit=4096)
    try:
        for offset, type_num, data in expected if order == "pack" else reversed(expected):
            assert entries.read(offset) == (type_num, data), offset
    finally:
        entries.close()


def test_ref_deltas_are_left_to_dulwich_and_the_corpus_is_the_same(make_repo: RepoFactory, tmp_path: Path) -> None:
    repo, commit = make_repo(FILES)
    with open_source(str(repo)) as source:
        loose = materialize(Store(tmp_path / "loose"), source, commit)
    pack_path = _repacked(repo, "-c", "repack.useDeltaBaseOffset=false")
    expected = list(_dulwich_objects(repo))
    types = _entry_types(pack_path, [offset for offset, _, _ in expected])
    assert types.count(REF_DELTA) >= 20 and OFS_DELTA not in types
    entries = PackEntries(str(pack_path), 1 << 20, 1 << 20)
    try:
        for (offset, type_num, data), entry_type in zip(expected, types, strict=True):
            assert entries.read(offset) == (None if entry_type == REF_DELTA else (type_num, data))
    finally:
        entries.close()
    with open_source(str(repo)) as source:
        assert materialize(Store(tmp_path / "packed"), source, commit) == loose


# -- packs written byte by byte ------------------------------------------------------------------------------


def _header(type_num: int, size: int) -> bytes:
    out, byte, size = bytearray(), (type_num << 4) | (size & 15), size >> 4
    while size:
        out.append(byte | 0x80)
        byte, size = size & 0x7F, size >> 7
    out.append(byte)
    return bytes(out)


def _back(distance: int) -> bytes:
    """git's encoding of an offset delta's distance back to its base."""
    out = [distance & 0x7F]
    distance >>= 7
    while distance:
        distance -= 1
        out.append(0x80 | (distance & 0x7F))
        distance >>= 7
    return bytes(reversed(out))


def _pack(tmp_path: Path, entries: list[bytes], *, trailer: bool = True) -> tuple[Path, list[int]]:
    """A pack file holding ``entries`` as given (and a zeroed trailer, unless not); the offset of each."""
    data, offsets = bytearray(b"PACK" + (2).to_bytes(4, "big") + len(entries).to_bytes(4, "big")), []
    for entry in entries:
        offsets.append(len(data))
        data += entry
    path = tmp_path / "crafted.pack"
    path.write_bytes(bytes(data + bytes(20 if trailer else 0)))
    return path, offsets


def _read(path: Path, offset: int) -> tuple[int, bytes] | None:
    entries = PackEntries(str(path), 1 << 20, 1 << 20)
    try:
        return entries.read(offset)
    finally:
        entries.close()


LINE = b"the base text, long enough to copy from\n"
BASE, TARGET = LINE * 20, LINE * 19 + b"!\n"
DELTA = b"".join(create_delta(BASE, TARGET))


def test_a_crafted_whole_object_and_offset_delta_read_as_written(tmp_path: Path) -> None:
    base = _header(BLOB, len(BASE)) + zlib.compress(BASE)
    delta = _header(OFS_DELTA, len(DELTA)) + _back(len(base)) + zlib.compress(DELTA)
    path, (first, second) = _pack(tmp_path, [base, delta])
    assert _read(path, first) == (BLOB, BASE)
    assert _read(path, second) == (BLOB, TARGET)


@pytest.mark.parametrize(
    "damage",
    [
        "declared size too small",
        "declared size too large",
        "stream cut short",
        "stream without its checksum",
        "stream damaged",
        "unknown type",
        "base is itself",
        "base inside the pack's header",
        "base before the pack's start",
        "delta does not fit its base",
        "size of more than 64 bits",
        "header runs off the end of the file",
    ],
)
def test_an_entry_that_does_not_hold_what_it_declares_is_left_to_dulwich(tmp_path: Path, damage: str) -> None:
    base = _header(BLOB, len(BASE)) + zlib.compress(BASE)
    deflated, delta = zlib.compress(DELTA), _header(OFS_DELTA, len(DELTA))
    crafted = {
        "declared size too small": _header(BLOB, len(BASE) - 1) + zlib.compress(BASE),
        "declared size too large": _header(BLOB, len(BASE) + 1) + zlib.compress(BASE),
        "stream cut short": _header(BLOB, len(BASE)) + zlib.compress(BASE)[:-9],
        "stream without its checksum": _header(BLOB, len(BASE)) + zlib.compress(BASE)[:-4],  # every byte, no end
        "stream damaged": _header(BLOB, len(BASE)) + bytes(b ^ 0x55 for b in zlib.compress(BASE)),
        "unknown type": _header(5, len(BASE)) + zlib.compress(BASE),
        "base is itself": delta + _back(0) + deflated,
        "base inside the pack's header": delta + _back(len(base) + 4) + deflated,
        "base before the pack's start": delta + b"\xff\xff\xff\x7f" + deflated,
        "size of more than 64 bits": b"\xb0" + b"\xff" * 40 + b"\x01" + zlib.compress(BASE),
        "header runs off the end of the file": b"\xb0\xff",
    }.get(damage, b"")
    if damage == "delta does not fit its base":  # a delta made for BASE, against a base of another length
        other = b"another base of quite another length\n"
        base = _header(BLOB, len(other)) + zlib.compress(other)
        crafted = delta + _back(len(base)) + deflated
    at_the_end = damage in ("header runs off the end of the file", "stream without its checksum")
    path, (_, offset) = _pack(tmp_path, [base, crafted], trailer=not at_the_end)
    assert _read(path, offset) is None


def test_a_stream_that_inflates_past_its_declared_size_stops_there(tmp_path: Path) -> None:
    # A deflate bomb: 64 MiB of zeros declared as 16 bytes. Inflating stops at the declared size plus one.
    bomb = zlib.compress(bytes(64 << 20), 9)
    path, (offset,) = _pack(tmp_path, [_header(BLOB, 16) + bomb])
    assert _read(path, offset) is None
