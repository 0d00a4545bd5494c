"""The harness-term scan that images and prebuilt trees go through: the terms certification uses, found in chunked
streams at any split, in paths and link targets, and in a store tree file by file."""

from __future__ import annotations

import io
import tarfile

from bench.contracts import PortablePath
from bench.packaging import HARNESS_TERMS
from bench.packaging.identity import IdentityFinding, ScanTally, TermStream, scan_tar, scan_tree
from bench.store import EntryKind, FileEntry, Store, tree_from_entries


def test_a_term_is_found_on_its_line_wherever_the_chunks_split_it() -> None:
    data = b"one\ntwo\nbuilt by Stele-Bench here\nthree\n"
    for term in HARNESS_TERMS:
        text = data.replace(b"Stele-Bench", term.upper().encode())
        for split in range(1, len(text)):
            stream = TermStream()
            stream.feed(text[:split])
            stream.feed(text[split:])
            assert stream.lines == {term: 3}, (term, split)


def test_line_numbers_survive_many_small_chunks() -> None:
    text = b"\n" * 10 + b"stele_bench\n" + b"\n" * 5 + b"stele bench"
    stream = TermStream()
    for at in range(0, len(text), 3):
        stream.feed(text[at : at + 3])
    assert stream.lines == {"stele_bench": 11, "stele bench": 17}


def test_clean_bytes_have_no_finding() -> None:
    stream = TermStream()
    stream.feed(b"stele and bench, apart; stele-benchmark? no: " + b"stelebenc")
    stream.feed(b"x")
    assert "stelebench" not in stream.lines and stream.lines == {"stele-bench": 1}  # 'stele-benchmark' holds it


def test_a_tar_stream_is_scanned_in_paths_link_targets_and_contents() -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in (("./ok.txt", b"nothing here\n"), ("./logs/build.log", b"x\n/home/u/stele-bench/y\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("./bin/tool")
        link.type, link.linkname = tarfile.SYMTYPE, "/opt/SteleBench/tool"
        archive.addfile(link)
    buffer.seek(0)
    tally = ScanTally()
    found = list(scan_tar(buffer, tally))
    assert found == [
        IdentityFinding("logs/build.log", 2, "stele-bench"),
        IdentityFinding("bin/tool", None, "stelebench"),
    ]
    assert (tally.entries, tally.files, tally.bytes) == (3, 2, 13 + 24)
    assert str(found[0]) == "logs/build.log:2: stele-bench"


def test_a_store_tree_is_scanned_file_by_file(store: Store) -> None:
    entries = [
        FileEntry(PortablePath("src/main.c"), EntryKind.FILE, b"int main(){}\n"),
        FileEntry(PortablePath("build/cache"), EntryKind.FILE, b"\n\nroot=/work/stele_bench/x\n"),
        FileEntry(PortablePath("build/stelebench.o"), EntryKind.FILE, b"\0\1"),
    ]
    tree = tree_from_entries(store, entries)
    assert scan_tree(store, tree) == [
        IdentityFinding("build/cache", 3, "stele_bench"),
        IdentityFinding("build/stelebench.o", None, "stelebench"),
    ]
