"""The ``analyze`` stage: the statistics summary of a bundle tree's records and admissions.

It runs the very function a bundle's receipt uses (:func:`bench.publish.receipts.run_deterministic`), so a store
summary and a published one agree byte for byte.
"""

from __future__ import annotations

from ..contracts import BlobDigest, ContractModel, PortablePath, TreeDigest
from ..publish.manifest import ReceiptStage
from ..publish.receipts import STAGE_VERSIONS, run_deterministic
from ..stages import Ports, StageContext, StageKind, stage
from ..store import EntryKind, Store, walk_tree

__all__ = ["AnalyzeInputs", "AnalyzeOutputs", "AnalyzeParams", "analyze", "bundle_contents"]


class AnalyzeParams(ContractModel):
    confidence: str


class AnalyzeInputs(Ports):
    bundle: TreeDigest  # laid out like a bundle: records/, admissions/


class AnalyzeOutputs(Ports):
    summary: BlobDigest  # canonical JSON


def bundle_contents(store: Store, tree: TreeDigest) -> dict[PortablePath, bytes]:
    """Every file of a bundle tree by its bundle path."""
    return {
        path: store.get_bytes(entry.digest)
        for path, entry in walk_tree(store, tree)
        if entry.kind in (EntryKind.FILE, EntryKind.EXECUTABLE)
    }


@stage("analyze", version=STAGE_VERSIONS[ReceiptStage.ANALYZE] + 1, kind=StageKind.DETERMINISTIC)
def analyze(context: StageContext, inputs: AnalyzeInputs, params: AnalyzeParams) -> AnalyzeOutputs:
    files = bundle_contents(context.store, inputs.bundle)
    summary = run_deterministic(ReceiptStage.ANALYZE, files, {"confidence": params.confidence})
    return AnalyzeOutputs(summary=context.store.put_bytes(summary))
