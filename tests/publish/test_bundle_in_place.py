"""A no-op demo or run verifies the project's bundle where it is when it already is the published tree, instead of
exporting and signing ~1,100 identical files again (issue 39); any bundle that is not exactly that tree, signed
by the project's key, is exported anew, so what the command reports is what an export would have given."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.publish.signing import generate_key, load_private_key, load_public_key
from bench.run.runner import export_published, publish_verified
from bench.stages.publish import publish_directory
from bench.store import Store, tree_from_directory
from bench.store.versions import set_versioned_ref
from tests.publish.bundle_factory import write_bundle

REF = "published/example"
SUMMARY = "receipts/statistics-summary.json"


@pytest.fixture
def published(tmp_path: Path) -> tuple[Store, Path, Path]:
    """A store whose ref holds a published bundle, exported and signed into ``target``; the key's path."""
    store = Store(tmp_path / "store")
    root = tmp_path / "bundle"
    write_bundle(root)
    publish_directory(root)
    set_versioned_ref(store, REF, tree_from_directory(store, root))
    key, _public, _ = generate_key(tmp_path / "keys" / "publisher.key")
    target = tmp_path / "published" / "example"
    export_published(store, REF, target, load_private_key(key))
    return store, target, key


def _publish(store: Store, target: Path, key: Path) -> bool:
    private, public = load_private_key(key), load_public_key(key.with_name(key.name + ".pub"))
    path, verification = publish_verified(store, REF, target, private, public)
    assert path == target
    return verification.verified


def _stamps(root: Path) -> dict[str, int]:
    return {str(path.relative_to(root)): path.stat().st_ino for path in root.rglob("*") if path.is_file()}


def test_a_bundle_that_is_the_published_tree_is_verified_in_place(published: tuple[Store, Path, Path]) -> None:
    store, target, key = published
    before = _stamps(target)
    assert _publish(store, target, key)
    assert _stamps(target) == before  # not one file written again
    assert (target.with_name("example-versions") / "index.json").is_file()


@pytest.mark.parametrize("change", ["altered", "extra", "missing", "unsigned"])
def test_a_bundle_in_place_that_differs_is_exported_anew(published: tuple[Store, Path, Path], change: str) -> None:
    store, target, key = published
    exported = (target / SUMMARY).read_bytes()
    if change == "altered":
        (target / SUMMARY).write_bytes(exported.replace(b"0", b"1"))
    elif change == "extra":
        (target / "records" / "note.json").write_text("{}", encoding="utf-8")
    elif change == "missing":
        (target / SUMMARY).unlink()
    else:
        (target / "provenance.dsse.json").unlink()
    assert _publish(store, target, key)
    assert (target / SUMMARY).read_bytes() == exported
    assert not (target / "records" / "note.json").exists()
    assert (target / "provenance.dsse.json").is_file()


def test_a_bundle_signed_by_another_key_is_signed_again(published: tuple[Store, Path, Path], tmp_path: Path) -> None:
    store, target, _ = published
    other, _public, _ = generate_key(tmp_path / "other" / "publisher.key")
    signature = (target / "provenance.dsse.json").read_bytes()
    assert _publish(store, target, other)
    assert (target / "provenance.dsse.json").read_bytes() != signature
