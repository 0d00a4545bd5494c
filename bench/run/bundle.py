"""The ``bundle`` stage: the suite's durable records laid out as a publication, exactly the files it was given.

Records go under ``records/<record hex>.json``, each admission under ``admissions/<hex of the record it
decides>.json`` (what the publication checks pair up), and every other file at the bundle path that keys it in
``files`` (receipts, preregistrations). ``publish`` then derives the summary and report and writes the manifest.
"""

from __future__ import annotations

from ..analysis.admission import AdmissionDecision
from ..analysis.attempt_record import PairedAttempt
from ..contracts import Digest, PortablePath, Ref, TreeDigest
from ..publish.bundle import ADMISSIONS, RECORDS
from ..stages import NoParams, Ports, StageContext, StageKind, stage
from ..store import EntryKind, FileEntry, tree_from_entries

__all__ = ["BundleInputs", "BundleOutputs", "bundle"]


class BundleInputs(Ports):
    """``records`` and ``admissions`` keyed by any label (their place follows from their content)."""

    records: dict[str, Ref[PairedAttempt]] = {}
    admissions: dict[str, Ref[AdmissionDecision]] = {}
    files: dict[str, Digest] = {}  # bundle path -> any stored object, published byte for byte


class BundleOutputs(Ports):
    bundle: TreeDigest


@stage("bundle", version=2, kind=StageKind.DETERMINISTIC)
def bundle(context: StageContext, inputs: BundleInputs, params: NoParams) -> BundleOutputs:
    store = context.store
    placed: dict[str, Digest] = {f"{RECORDS}/{digest.hex}.json": digest for digest in inputs.records.values()}
    for digest in inputs.admissions.values():
        decided = store.get_document(digest, AdmissionDecision).record
        placed[f"{ADMISSIONS}/{decided.hex}.json"] = digest
    placed.update(inputs.files)
    entries = [FileEntry(PortablePath(path), EntryKind.FILE, store.get_bytes(d)) for path, d in placed.items()]
    return BundleOutputs(bundle=tree_from_entries(store, entries))
