"""The ``bundle`` and ``publish`` stages: the suite's durable records laid out as a publication, then published.

``bundle`` takes its inputs by their bundle path (``records/<hex>.json``, ``admissions/...``, ``manifests/...``,
``receipts/...``) and stores exactly those files as one tree. ``publish`` derives the statistics summary and the
HTML report from it, runs every publication check and writes ``MANIFEST.json``: the published tree is what
`stele-bench verify` checks after it is exported.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path

from ..analysis.admission import AdmissionDecision
from ..contracts import ContractModel, Digest, PortablePath
from ..publish.bundle import ADMISSIONS, RECORDS
from ..publish.publish import publish
from ..stages.stage import StageKind, stage
from ..store import EntryKind, FileEntry, Store, export_tree, tree_from_directory, tree_from_entries

__all__ = ["ADMISSION_INPUT", "RECORD_INPUT", "BundleParams", "PublishParams", "bundle", "publish_stage"]

# Inputs named ``record:<anything>`` are paired records, laid out under records/ by their own digest;
# ``admission:<anything>`` are decisions, laid out under admissions/ by the digest of the record they decide.
RECORD_INPUT = "record:"
ADMISSION_INPUT = "admission:"


class BundleParams(ContractModel):
    pass


class PublishParams(ContractModel):
    confidence: str


@stage("bundle", version=1, kind=StageKind.DETERMINISTIC, params=BundleParams)
def bundle(store: Store, inputs: Mapping[str, Digest], params: BundleParams) -> dict[str, Digest]:
    """Every input becomes the file at its name, or for records and admissions the file the publication checks
    require; the output ``bundle`` is their tree."""
    entries = [
        FileEntry(_bundle_path(store, name, digest), EntryKind.FILE, store.get_bytes(digest))
        for name, digest in inputs.items()
    ]
    return {"bundle": tree_from_entries(store, entries)}


def _bundle_path(store: Store, name: str, digest: Digest) -> PortablePath:
    if name.startswith(RECORD_INPUT):
        return PortablePath(f"{RECORDS}/{digest.hex}.json")
    if name.startswith(ADMISSION_INPUT):
        decided = store.get_document(digest, AdmissionDecision).record
        return PortablePath(f"{ADMISSIONS}/{decided.hex}.json")
    return PortablePath(name)


@stage("publish", version=1, kind=StageKind.DETERMINISTIC, params=PublishParams)
def publish_stage(store: Store, inputs: Mapping[str, Digest], params: PublishParams) -> dict[str, Digest]:
    """Input ``bundle``; output ``published``: the bundle plus summary, report and manifest, all checks passed."""
    with tempfile.TemporaryDirectory(prefix="publish-") as scratch:
        root = Path(scratch) / "bundle"
        export_tree(store, inputs["bundle"], root)
        publish(root, params.confidence)
        return {"published": tree_from_directory(store, root)}
