"""The deterministic receipts of a bundle: how each is derived from other published files.

``derive`` is the one function both ``publish`` (to write a receipt) and ``verify`` (to re-derive it from its
recorded inputs) call, so the two can never disagree about what a receipt should contain.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..analysis import StatisticsSummary, admitted, summarize
from ..contracts import PortablePath, canonical_bytes
from ..errors import ContractError
from .bundle import (
    ADMISSIONS,
    MANIFESTS,
    RECORDS,
    REPORT_PATH,
    SUMMARY_PATH,
    load_admissions,
    load_preregistrations,
    load_records,
    parse_document,
)
from .manifest import Receipt, ReceiptStage
from .render import render_report

__all__ = ["STAGE_VERSIONS", "derive", "plan_receipts", "run_deterministic"]

Files = Mapping[PortablePath, bytes]


def _analyze(inputs: Files, params: Mapping[str, str]) -> bytes:
    records = {digest: record for digest, (_, record) in load_records(inputs).items()}
    chosen = admitted(records, load_admissions(inputs).values())
    return canonical_bytes(summarize(chosen, params["confidence"], load_preregistrations(inputs)))


def _report(inputs: Files, params: Mapping[str, str]) -> bytes:
    summary = parse_document(SUMMARY_PATH, inputs[SUMMARY_PATH], StatisticsSummary)
    return render_report(summary, load_records(inputs), load_admissions(inputs)).encode("utf-8")


_DERIVERS: dict[ReceiptStage, tuple[int, Callable[[Files, Mapping[str, str]], bytes]]] = {
    ReceiptStage.ANALYZE: (2, _analyze),  # 2: comparisons across challenges, power from the preregistrations
    ReceiptStage.REPORT: (2, _report),
}
STAGE_VERSIONS = {stage: version for stage, (version, _) in _DERIVERS.items()}


def run_deterministic(stage: ReceiptStage, inputs: Files, params: Mapping[str, str]) -> bytes:
    """The bytes ``stage`` derives from ``inputs`` (bundle paths to bytes): shared by bundles and store stages."""
    return _DERIVERS[stage][1](inputs, params)


def derive(receipt: Receipt, files: Files) -> bytes:
    """Re-run ``receipt``'s stage on exactly its recorded inputs."""
    version = STAGE_VERSIONS[receipt.stage]
    if receipt.version != version:
        raise ContractError(
            f"{receipt.path} was derived by {receipt.stage.value} v{receipt.version}, but this code is "
            f"v{version}; verify it with the release that published it"
        )
    missing = [p for p in receipt.inputs if p not in files]
    if missing:
        raise ContractError(f"{receipt.path}: recorded input(s) {missing} are not in the bundle")
    return run_deterministic(receipt.stage, {p: files[p] for p in receipt.inputs}, receipt.params)


def plan_receipts(files: Files, confidence: str) -> list[Receipt]:
    """The receipts a bundle with these records and admissions publishes, in derivation order."""
    sources = sorted(p for p in files if p.parts[0] in (RECORDS, ADMISSIONS, MANIFESTS))
    return [
        Receipt(
            path=SUMMARY_PATH,
            stage=ReceiptStage.ANALYZE,
            version=STAGE_VERSIONS[ReceiptStage.ANALYZE],
            params={"confidence": confidence},
            inputs=sources,
        ),
        Receipt(
            path=REPORT_PATH,
            stage=ReceiptStage.REPORT,
            version=STAGE_VERSIONS[ReceiptStage.REPORT],
            params={},
            inputs=[SUMMARY_PATH, *sources],
        ),
    ]
