"""The ``report`` stage: the static HTML report of the records, their admissions and the summary."""

from __future__ import annotations

from ..analysis import StatisticsSummary
from ..builder import Ports, StageContext, StageKind, stage
from ..contracts import BlobDigest, ContractModel, PortablePath, Ref
from ..publish.bundle_layout import ADMISSIONS, RECORDS
from ..publish.render import render_report
from .analyze import Verdicts, verdicts

__all__ = ["ReportInputs", "ReportOutputs", "ReportParams", "report"]


class ReportParams(ContractModel):
    suite: str  # what the title names
    harness: str | None = None  # the agent harness the arms ran, as the plan names it (None: not recorded)


class ReportInputs(Verdicts):
    summary: Ref[StatisticsSummary]
    pages: dict[str, BlobDigest] = {}  # attempt label (view.page_label) -> its transcript page, linked per record


class ReportOutputs(Ports):
    report: BlobDigest  # static HTML


@stage("report", version=5, kind=StageKind.DETERMINISTIC)
def report(context: StageContext, inputs: ReportInputs, params: ReportParams) -> ReportOutputs:
    store = context.store
    records, decisions = verdicts(store, inputs)
    summary = store.get_document(inputs.summary, StatisticsSummary)
    placed = {digest: (PortablePath(f"{RECORDS}/{digest.hex}.json"), record) for digest, record in records.items()}
    decided = {PortablePath(f"{ADMISSIONS}/{decision.record.hex}.json"): decision for decision in decisions}
    html = render_report(summary, placed, decided, frozenset(inputs.pages), params.suite, params.harness)
    return ReportOutputs(report=store.put_bytes(html.encode("utf-8")))
