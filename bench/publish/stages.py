"""The analyze and report receipts as store stages, so the engine caches them and `rederive` can check them.

They run the very functions a bundle's receipts use (``receipts.run_deterministic``); the input is a store
tree laid out like a bundle (``records/``, ``admissions/``), so a store summary and a published one agree byte
for byte.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..contracts import ContractModel, Digest, PortablePath
from ..stages.stage import StageKind, stage
from ..store import EntryKind, Store, walk_tree
from .bundle import SUMMARY_PATH
from .manifest import ReceiptStage
from .receipts import STAGE_VERSIONS, run_deterministic

__all__ = ["AnalyzeParams", "ReportParams", "analyze", "report"]


class AnalyzeParams(ContractModel):
    confidence: str


class ReportParams(ContractModel):
    pass


def _bundle_files(store: Store, tree: Digest) -> dict[PortablePath, bytes]:
    return {
        path: store.get_bytes(entry.digest)
        for path, entry in walk_tree(store, tree)
        if entry.kind in (EntryKind.FILE, EntryKind.EXECUTABLE)
    }


@stage("analyze", version=STAGE_VERSIONS[ReceiptStage.ANALYZE], kind=StageKind.DETERMINISTIC, params=AnalyzeParams)
def analyze(store: Store, inputs: Mapping[str, Digest], params: AnalyzeParams) -> dict[str, Digest]:
    """inputs: ``bundle`` (a tree with records/ and admissions/) -> ``summary`` (canonical JSON blob)."""
    files = _bundle_files(store, inputs["bundle"])
    return {
        "summary": store.put_bytes(run_deterministic(ReceiptStage.ANALYZE, files, {"confidence": params.confidence}))
    }


@stage("report", version=STAGE_VERSIONS[ReceiptStage.REPORT], kind=StageKind.DETERMINISTIC, params=ReportParams)
def report(store: Store, inputs: Mapping[str, Digest], params: ReportParams) -> dict[str, Digest]:
    """inputs: ``bundle`` tree and its ``summary`` blob -> ``report`` (static HTML blob)."""
    files = _bundle_files(store, inputs["bundle"])
    files[SUMMARY_PATH] = store.get_bytes(inputs["summary"])
    return {"report": store.put_bytes(run_deterministic(ReceiptStage.REPORT, files, {}))}
