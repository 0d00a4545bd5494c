"""The hashing pass of verify (``rehash``): every difference a bundle on disk has from its manifest, in a fixed
order, against an independent reading of the same files; what it refuses outright. Every test runs on both
routes: hashed in this process alone, and with every other file hashed in a forked process (issue 18)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.contracts import Digest, PortablePath
from bench.errors import SourceError
from bench.publish import filedigests
from bench.publish.bundle_layout import BundleError
from bench.publish.filedigests import BundleDigests
from bench.publish.manifest import PublicationManifest, PublishedFile, read_manifest, write_manifest
from bench.publish.verification import Difference, rehash
from bench.store.trees import scan_directory


@pytest.fixture(autouse=True, params=["alone", "forked"])
def route(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both routes; the forked one for any bundle, with the one-thread rule lifted (other tests' loopback servers
    may still be serving from threads of this process; the rule has tests of its own)."""
    forked = request.param == "forked"
    monkeypatch.setattr(filedigests, "fork_is_safe", lambda: forked)
    monkeypatch.setattr(filedigests, "FORK_MIN_FILES", 1)
    return str(request.param)


def _rehash(manifest: PublicationManifest, root: Path) -> list[Difference]:
    with BundleDigests(root) as files:
        return rehash(manifest, files)


def _bundle(root: Path, objects: int = 3) -> PublicationManifest:
    files = {f"records/{n:064x}.json": f'{{"record": {n}}}'.encode() * (n + 1) for n in range(4)}
    files["receipts/c-01/0/control-grade.json"] = b'{"grade": "pass"}' * 300  # over blake3's GIL threshold
    files["report/index.html"] = b"<html></html>"
    for n in range(objects):
        data = f'{{"object": {n}}}'.encode()
        files[f"objects/{Digest.of(data).hex}.json"] = data
    for relative, data in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(data)
    listed = [PublishedFile(path=PortablePath(p), digest=Digest.of(d)) for p, d in sorted(files.items())]
    manifest = PublicationManifest(files=listed)
    write_manifest(root, manifest)
    return manifest


def _expected(manifest: PublicationManifest, root: Path) -> list[tuple[str, str | None, str | None, tuple[str, ...]]]:
    """What the hashing pass must find, from a plain walk and read of the directory: the oracle."""
    actual = {
        path.relative_to(root).as_posix(): Digest.of(path.read_bytes())
        for path in root.rglob("*")
        if path.is_file() and path.relative_to(root).as_posix() not in ("MANIFEST.json", "provenance.intoto.json")
    }
    listed = {entry.path: entry.digest for entry in manifest.files}
    found: list[tuple[str, str | None, str | None, tuple[str, ...]]] = [
        (path, digest, actual.get(path), ()) for path, digest in listed.items() if actual.get(path) != digest
    ]
    unlisted = sorted(set(actual) - set(listed))
    found += [(path, None, actual[path], ("not covered by the manifest",)) for path in unlisted]
    found += [
        (path, None, actual[path], ("an object not named by its digest",))
        for path in sorted(actual)
        if path.startswith("objects/") and path.split("/")[-1].removesuffix(".json") != actual[path].hex
    ]
    return found


def _found(manifest: PublicationManifest, root: Path) -> list[tuple[str, str | None, str | None, tuple[str, ...]]]:
    differences = _rehash(manifest, root)
    assert all(difference.how == "re-hashed" for difference in differences)
    return [(d.path, d.recorded, d.actual, d.lineage) for d in differences]


def test_an_untouched_bundle_has_no_difference(tmp_path: Path) -> None:
    manifest = _bundle(tmp_path)
    assert _rehash(read_manifest(tmp_path / "MANIFEST.json"), tmp_path) == []
    assert _expected(manifest, tmp_path) == []


def test_every_kind_of_difference_is_reported_once_in_a_fixed_order(tmp_path: Path) -> None:
    manifest = _bundle(tmp_path)
    records = sorted((tmp_path / "records").iterdir())
    records[2].write_bytes(records[2].read_bytes() + b" ")  # tampered: one byte more
    records[0].write_bytes(b"X" + records[0].read_bytes()[1:])  # tampered: same size
    (tmp_path / "report" / "index.html").unlink()  # missing
    (tmp_path / "receipts" / "zz-late.json").write_bytes(b"{}")  # not listed
    (tmp_path / "admissions").mkdir()
    (tmp_path / "admissions" / "a.json").write_bytes(b"{}")  # not listed, in a folder of its own
    misnamed = sorted((tmp_path / "objects").iterdir())[1]
    misnamed.write_bytes(b'{"object": "swapped"}')  # listed and renamed nowhere: differs and misnamed
    found = _found(manifest, tmp_path)
    assert found == _expected(manifest, tmp_path)
    assert [path for path, *_ in found] == [
        f"objects/{misnamed.name}",
        f"records/{records[0].name}",
        f"records/{records[2].name}",
        "report/index.html",
        "admissions/a.json",
        "receipts/zz-late.json",
        f"objects/{misnamed.name}",
    ]
    assert found[3][2] is None  # the missing file: recorded, nothing re-hashed
    assert found[1][2] == Digest.of((tmp_path / "records" / records[0].name).read_bytes())


def test_a_listed_file_replaced_by_a_directory_is_missing_and_its_contents_uncovered(tmp_path: Path) -> None:
    manifest = _bundle(tmp_path)
    (tmp_path / "report" / "index.html").unlink()
    (tmp_path / "report" / "index.html").mkdir()
    (tmp_path / "report" / "index.html" / "inner.html").write_bytes(b"<p>")
    found = _found(manifest, tmp_path)
    assert found == _expected(manifest, tmp_path)
    assert [(path, actual is None) for path, _, actual, _ in found] == [
        ("report/index.html", True),
        ("report/index.html/inner.html", False),
    ]


def test_a_file_replaced_by_a_symlink_is_refused_naming_it(tmp_path: Path) -> None:
    manifest = _bundle(tmp_path)
    target = tmp_path / "report" / "index.html"
    target.unlink()
    os.symlink("/etc/hostname", target)
    with pytest.raises(BundleError, match=r"^report/index\.html: in .* is not a regular file"):
        _rehash(manifest, tmp_path)


def test_a_name_that_cannot_be_a_portable_path_is_refused_listed_or_not(tmp_path: Path) -> None:
    manifest = _bundle(tmp_path)
    (tmp_path / "receipts" / "back\\slash.json").write_bytes(b"{}")
    with pytest.raises(SourceError, match=r"has a name that cannot enter a tree: .*backslash"):
        _rehash(manifest, tmp_path)


def test_a_listed_path_is_taken_from_the_listing_and_an_unlisted_one_checked(tmp_path: Path) -> None:
    _bundle(tmp_path)
    listed = {path: path for path in (PortablePath("report/index.html"), PortablePath("report"))}
    scanned = {str(path): path for path, _, _ in scan_directory(tmp_path, listed)}
    assert scanned["report/index.html"] is listed[PortablePath("report/index.html")]
    assert scanned["records"] is not None and isinstance(scanned["records"], PortablePath)
    assert set(scanned) == {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")}
