"""References are read by type: a digest kept as a value is never a missing object, a reference always is.

Before issue 31, every digest-shaped string in a document counted as a reference, so every healthy demo store had
16 "missing" objects: the preregistrations' digests and the comparability keys' ids, which name things the store
never holds.
"""

from __future__ import annotations

from bench.analysis import Admission, AdmissionDecision, Build, ReasonCode
from bench.contracts import Digest, canonical_bytes, canonical_json
from bench.store import Store
from bench.store.fsck import FsckStatus, fsck
from bench.store.gc import gc
from bench.store.references import document_references
from tests.analysis.attempt_factory import arm, attempt, key


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
