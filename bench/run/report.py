"""The ``report`` stage: the static HTML report of a bundle tree and its summary, as a bundle's receipt has it."""

from __future__ import annotations

from ..contracts import BlobDigest, TreeDigest
from ..publish.bundle import SUMMARY_PATH
from ..publish.manifest import ReceiptStage
from ..publish.receipts import STAGE_VERSIONS, run_deterministic
from ..stages import NoParams, Ports, StageContext, StageKind, stage
from .analyze import bundle_contents

__all__ = ["ReportInputs", "ReportOutputs", "report"]


class ReportInputs(Ports):
    bundle: TreeDigest
    summary: BlobDigest


class ReportOutputs(Ports):
    report: BlobDigest  # static HTML


@stage("report", version=STAGE_VERSIONS[ReceiptStage.REPORT] + 1, kind=StageKind.DETERMINISTIC)
def report(context: StageContext, inputs: ReportInputs, params: NoParams) -> ReportOutputs:
    files = bundle_contents(context.store, inputs.bundle)
    files[SUMMARY_PATH] = context.store.get_bytes(inputs.summary)
    return ReportOutputs(report=context.store.put_bytes(run_deterministic(ReceiptStage.REPORT, files, {})))
