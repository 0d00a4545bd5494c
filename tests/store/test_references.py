"""References are read by type: a digest kept as a value is never a missing object, a reference always is.

Before issue 31, every digest-shaped string in a document counted as a reference, so every healthy demo store had
16 "missing" objects: the preregistrations' digests and the comparability keys' ids, which name things the store
never holds.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, JsonValue

from bench.analysis import Admission, AdmissionDecision, Build, ReasonCode
from bench.contracts import (
    BlobDigest,
    ContractModel,
    Digest,
    DigestValue,
    Document,
    TreeDigest,
    canonical_bytes,
    canonical_json,
)
from bench.stages.publish import publish_directory
from bench.store import Store, references
from bench.store.fsck import FsckStatus, fsck
from bench.store.gc import gc
from bench.store.references import _reference_fields, document_references
from tests.analysis.attempt_factory import arm, attempt, key
from tests.publish.bundle_factory import write_bundle


def test_a_comparability_key_names_its_parts_by_value() -> None:
    unheld = key(manifest=b"a preregistration the store never holds")
    record = attempt(1, arm(True), arm(False), unheld, Build(label="b", sequence=1))
    store = Store.in_memory()
    store.put_document(record)
    assert document_references(canonical_bytes(record)) == []
    assert fsck(store).status is FsckStatus.CLEAN  # its manifest, fixture, policy and verifier digests are values
    assert unheld.manifest not in set(store.digests())


def test_an_admission_refers_to_its_record_and_fsck_says_when_it_is_gone() -> None:
    store = Store.in_memory()
    record = Digest.of(b"a record never stored")
    decision = AdmissionDecision(record=record, decision=Admission.EXCLUDED, reason=ReasonCode.NOT_COMPLETED, note="")
    admission = store.put_document(decision)
    assert document_references(canonical_bytes(decision)) == [record]
    report = fsck(store)
    assert report.status is FsckStatus.MISSING and report.missing == {record: [str(admission)]}


def test_a_digest_shaped_string_in_an_untyped_document_still_counts_for_gc() -> None:
    store = Store.in_memory()
    kept = store.put_bytes(b"named only by an unknown kind of document")
    unknown = store.put_bytes(canonical_json({"kind": "from-a-later-release", "names": [str(kept)]}), document=True)
    store.set_ref("keep", unknown)
    assert gc(store, grace_seconds=0).deleted == 0  # what no contract reads is walked by shape: nothing is lost
    assert store.has(kept)


class _Inner(ContractModel):
    note: str
    blob: BlobDigest | None = None


class _Shapes(Document):
    kind: Literal["test-reference-shapes"] = "test-reference-shapes"
    schema_version: Literal[1] = 1
    count: int
    price: Decimal
    label: Literal["a", "b"]
    reason: ReasonCode
    value: DigestValue
    values: list[DigestValue]
    tree: TreeDigest
    by_name: dict[str, BlobDigest]
    nested: list[_Inner]
    maybe: Annotated[Digest | None, "a marker"] = None
    loose: dict[str, Any] = {}
    body: JsonValue = None  # a recorded request or answer: plain JSON, however digest-shaped its strings


def test_only_fields_that_can_hold_a_reference_are_walked_and_every_reference_is_found() -> None:
    assert _reference_fields(_Shapes) == ("tree", "by_name", "nested", "maybe")
    assert _reference_fields(_Inner) == ("blob",)
    one, two, three = (Digest.of(text) for text in (b"one", b"two", b"three"))
    shapes = _Shapes(
        count=1,
        price=Decimal("0.5"),
        label="a",
        reason=ReasonCode.NOT_COMPLETED,
        value=DigestValue(Digest.of(b"a value")),
        values=[DigestValue(Digest.of(b"another value"))],
        tree=TreeDigest(one),
        by_name={"x": BlobDigest(two)},
        nested=[_Inner(note="n"), _Inner(note="m", blob=BlobDigest(three))],
        maybe=one,
        loose={"shaped": str(two)},  # an untyped field's digest-shaped string is a value, as before
        body={"messages": [str(three)]},
    )
    assert document_references(canonical_bytes(shapes)) == [one, two, three, one]


class _Plain(ContractModel):
    note: str
    tags: tuple[str, ...] = ()


class _Node(ContractModel):
    blob: BlobDigest | None = None
    children: list[_Node] = []


class _Holder(Document):
    kind: Literal["test-reference-holder"] = "test-reference-holder"
    schema_version: Literal[1] = 1
    plain: list[_Plain]
    inner: _Inner
    node: _Node


def test_a_model_none_of_whose_fields_can_hold_a_reference_is_not_walked_and_one_that_holds_itself_is() -> None:
    assert _reference_fields(_Holder) == ("inner", "node") and _reference_fields(_Plain) == ()
    assert _reference_fields(_Node) == ("blob", "children")
    one, two = Digest.of(b"one"), Digest.of(b"two")
    node = _Node(children=[_Node(blob=BlobDigest(one)), _Node(children=[_Node(blob=BlobDigest(two))])])
    holder = _Holder(plain=[_Plain(note=str(one))], inner=_Inner(note="n", blob=BlobDigest(two)), node=node)
    assert document_references(canonical_bytes(holder)) == [two, one, two]


def _every_field(model: type[BaseModel]) -> tuple[str, ...]:
    """Walk every field of every model: what the table of fields that can hold a reference must agree with."""
    return tuple(model.model_fields)


def test_the_references_of_every_document_of_a_published_bundle_are_those_of_every_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "bundle"
    write_bundle(root)
    publish_directory(root)
    documents = [path.read_bytes() for path in sorted(root.rglob("*.json"))]
    documents = [data for data in documents if Document.of_kind(json.loads(data).get("kind", "")) is not None]
    found = [document_references(data) for data in documents]
    monkeypatch.setattr(references, "_reference_fields", _every_field)
    assert found == [document_references(data) for data in documents]
    assert len(documents) > 20 and sum(map(len, found)) > 20
