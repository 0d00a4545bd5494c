"""The ``bundle`` stage: the suite's durable records laid out as a publication, with everything a re-grade reads.

Records go under ``records/<record hex>.json``, each admission under ``admissions/<hex of the record it
decides>.json`` (what the publication checks pair up), and every other file at the bundle path that keys it in
``files`` (receipts, preregistrations, the summary and the report). Below them, the lineage the store recorded:
``receipts/lineage.json`` lists every action that led to those files, and ``objects/`` holds every object those
actions read or wrote (transcripts as written, normalised transcripts, gateway logs, verifier results, audits,
tree listings, spec-diffs, fence records, snapshots), so ``verify`` re-runs the deterministic ones from the
bundle alone. ``publish`` then runs the publication checks and writes the manifest.

The lineage is exactly the run's: ``run`` lists the key of every action upstream of this invocation (the pipeline
fills it, see bench/pipeline/run_actions.py), each published with the result the run used. An action another run
recorded, which happened to produce the same bytes, never enters, and the keys are in this stage's own key, so the
same run gives the same bundle.
"""

from __future__ import annotations

from ..analysis.admission import AdmissionDecision
from ..analysis.attempt_record import PairedAttempt
from ..builder import NoParams, Ports, StageContext, StageKind, stage
from ..contracts import Digest, PortablePath, Ref, TreeDigest
from ..publish.bundle_layout import ADMISSIONS, RECORDS
from ..publish.lineage_files import lineage_files
from ..store import EntryKind, FileEntry, tree_from_entries
from ..store.actions import RunActions

__all__ = ["BundleInputs", "BundleOutputs", "bundle"]


class BundleInputs(Ports):
    """``records`` and ``admissions`` keyed by any label (their place follows from their content)."""

    records: dict[str, Ref[PairedAttempt]] = {}
    admissions: dict[str, Ref[AdmissionDecision]] = {}
    files: dict[str, Digest] = {}  # bundle path -> any stored object, published byte for byte
    run: Ref[RunActions]  # the actions upstream of this invocation, filled by the pipeline


class BundleOutputs(Ports):
    bundle: TreeDigest


@stage("bundle", version=4, kind=StageKind.DETERMINISTIC)
def bundle(context: StageContext, inputs: BundleInputs, params: NoParams) -> BundleOutputs:
    store = context.store
    placed: dict[str, Digest] = {f"{RECORDS}/{digest.hex}.json": digest for digest in inputs.records.values()}
    for digest in inputs.admissions.values():
        decided = store.get_document(digest, AdmissionDecision).record
        placed[f"{ADMISSIONS}/{decided.hex}.json"] = digest
    placed.update(inputs.files)
    files = {PortablePath(path): store.get_bytes(digest) for path, digest in placed.items()}
    files.update(lineage_files(store, store.get_document(inputs.run, RunActions).keys, placed.values()))
    entries = [FileEntry(path, EntryKind.FILE, data) for path, data in files.items()]
    return BundleOutputs(bundle=tree_from_entries(store, entries))
