"""The ``analyze`` stage: the statistics summary of the records the admissions admit, and the count of the others
by treatment condition and reason.

Its inputs are the records and admissions themselves (documents, not a tree), so ``verify`` re-runs it from a
bundle's ``records/`` and ``admissions/`` alone. The confidence comes in as a param.
"""

from __future__ import annotations

from typing import Annotated

from ..analysis import (
    AdmissionDecision,
    PairedAttempt,
    Preregistration,
    StatisticsSummary,
    admitted,
    exclusion_counts,
    summarize,
)
from ..builder import SUPPLIED, Ports, StageContext, StageKind, stage
from ..contracts import BlobDigest, ContractModel, Digest, Ref
from ..publish.bundle_layout import MANIFESTS, parse_document
from ..store import Store

__all__ = ["AnalyzeInputs", "AnalyzeOutputs", "AnalyzeParams", "Verdicts", "analyze", "verdicts"]


class AnalyzeParams(ContractModel):
    confidence: str


class Verdicts(Ports):
    """Records and admissions keyed by any label (the plan's ``<challenge>-<attempt>-<system>``)."""

    # Supplied: a bundle assembled by hand (`publish DIR`) gives its records and admissions as they are.
    records: Annotated[dict[str, Ref[PairedAttempt]], SUPPLIED]
    admissions: Annotated[dict[str, Ref[AdmissionDecision]], SUPPLIED]


class AnalyzeInputs(Verdicts):
    # "<challenge>/v<N>" -> the preregistration the records ran under: the power it planned, the baseline it names
    preregistrations: Annotated[dict[str, BlobDigest], SUPPLIED] = {}


class AnalyzeOutputs(Ports):
    summary: Ref[StatisticsSummary]


def verdicts(store: Store, inputs: Verdicts) -> tuple[dict[Digest, PairedAttempt], list[AdmissionDecision]]:
    """The records by digest and every admission decision, read from the store."""
    records: dict[Digest, PairedAttempt] = {
        digest: store.get_document(digest, PairedAttempt) for digest in inputs.records.values()
    }
    decisions = [store.get_document(digest, AdmissionDecision) for digest in inputs.admissions.values()]
    return records, decisions


@stage("analyze", version=5, kind=StageKind.DETERMINISTIC)
def analyze(context: StageContext, inputs: AnalyzeInputs, params: AnalyzeParams) -> AnalyzeOutputs:
    records, decisions = verdicts(context.store, inputs)
    plans = [
        parse_document(f"{MANIFESTS}/{name}.json", context.store.get_bytes(digest), Preregistration)
        for name, digest in sorted(inputs.preregistrations.items())
    ]
    summary = summarize(admitted(records, decisions), params.confidence, plans, exclusion_counts(records, decisions))
    return AnalyzeOutputs(summary=context.store.put_document(summary))
