"""Digest prefixes resolve wherever a digest is accepted (issue 21, build item 3): the twelve hex digits progress
lines print, any unique prefix of at least four (``blake3:`` optional), or a ref; an ambiguous prefix is refused
listing what it matches, and an unknown one names the store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.cli import main
from bench.contracts import Digest
from bench.store import Store


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["--json", *argv])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1, lines
    result: dict[str, Any] = json.loads(lines[0])
    return code, result


def _two_sharing_a_prefix(store: Store) -> tuple[Digest, Digest]:
    """Store blobs until two digests share their first four hex digits (about 300 by the birthday bound)."""
    seen: dict[str, Digest] = {}
    for number in range(100_000):
        digest = store.put_bytes(f"blob {number}\n".encode())
        other = seen.setdefault(digest.hex[:4], digest)
        if other != digest:
            return other, digest
    raise AssertionError("no two digests shared four hex digits")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "store")


@pytest.mark.parametrize("form", ["{short}", "blake3:{short}", "{hex}", "{full}"])
def test_the_short_digest_progress_prints_and_other_prefixes_resolve_in_store_cat(
    capsys: pytest.CaptureFixture[str], store: Store, form: str
) -> None:
    digest = store.put_bytes(b"the twelve digits a progress line shows\n")
    typed = form.format(short=digest.hex[:12], hex=digest.hex, full=str(digest))
    code, result = _run(capsys, "--store", store.location, "store", "cat", typed)
    assert (code, result["digest"], result["text"]) == (0, str(digest), "the twelve digits a progress line shows\n")


def test_a_prefix_resolves_in_every_command_that_takes_a_digest(
    capsys: pytest.CaptureFixture[str], store: Store, tmp_path: Path
) -> None:
    source = tmp_path / "tree"
    source.mkdir()
    (source / "a.txt").write_text("a\n")
    code, put = _run(capsys, "--store", store.location, "store", "put", str(source))
    short = Digest(put["digest"]).hex[:12]
    code, exported = _run(capsys, "--store", store.location, "store", "export", short, str(tmp_path / "out"))
    assert code == 0 and exported["exported"] == put["digest"] and (tmp_path / "out" / "a.txt").read_text() == "a\n"
    code, lineage = _run(capsys, "--store", store.location, "lineage", short)
    assert code == 0 and lineage["root"] == put["digest"]


def test_an_ambiguous_prefix_is_refused_listing_what_it_matches(
    capsys: pytest.CaptureFixture[str], store: Store
) -> None:
    first, second = _two_sharing_a_prefix(store)
    code, result = _run(capsys, "--store", store.location, "store", "cat", first.hex[:4])
    error = result["error"]
    assert (code, error["code"]) == (2, "usage")
    assert "ambiguous" in error["message"]
    assert first.hex[:16] in error["message"] and second.hex[:16] in error["message"]
    assert error["hint"] == "give more hex digits"
    code, result = _run(capsys, "--store", store.location, "store", "cat", first.hex[:12])
    assert (code, result["digest"]) == (0, str(first))  # more digits settle it


def test_an_unknown_prefix_names_the_store_and_a_too_short_one_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], store: Store
) -> None:
    digest = store.put_bytes(b"x")
    absent = "0000" if not digest.hex.startswith("0000") else "ffff"
    code, result = _run(capsys, "--store", store.location, "store", "cat", absent)
    assert code == 2 and store.location in result["error"]["message"] and "starting with" in result["error"]["message"]
    code, result = _run(capsys, "--store", store.location, "store", "cat", "abc")
    assert code == 2 and "no ref named 'abc'" in result["error"]["message"]  # three digits: read as a ref
    code, result = _run(capsys, "--store", store.location, "store", "cat", "ab:c")
    assert code == 2 and "at least 4 hex digits" in result["error"]["message"]


def test_a_whole_digest_whose_size_disagrees_with_its_hash_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], store: Store
) -> None:
    """Its hash names a stored object of another size: a typing mistake, refused as one, not reported as missing."""
    digest = store.put_bytes(b"seven b")
    wrong = Digest.from_parts(digest.hex, digest.size + 1)
    code, result = _run(capsys, "--store", store.location, "store", "cat", str(wrong))
    error = result["error"]
    assert (code, error["code"], error["field"]) == (2, "usage", "digest")
    assert (error["expected"], error["actual"]) == (str(digest), str(wrong))
    absent = Digest.of(b"never stored")  # a whole digest nothing in the store shares a hash with: missing, exit 4
    code, result = _run(capsys, "--store", store.location, "store", "cat", str(absent))
    assert (code, result["error"]["code"]) == (4, "object-missing")
