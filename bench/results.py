"""A published bundle's records, for a notebook: one call, typed documents, and flat rows for a data frame.

    from bench.results import load_bundle

    bundle = load_bundle("published/example")           # a bundle directory (what `demo` and `run` export)
    bundle = load_bundle("published/example", store="store")   # or a ref, digest or prefix in a store
    bundle.records                                       # {record digest: PairedAttempt}
    bundle.admissions                                    # {record digest: AdmissionDecision}
    bundle.summary                                       # the StatisticsSummary receipt, as published
    bundle.headline.lines()                              # per condition passes and deliveries, pooled effect
    pandas.DataFrame(bundle.rows())                      # one row per arm, admitted or not, with the reason

Every file is read through its contract, strictly, as publication reads it: a bundle that does not parse is
refused naming the file, never half loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .analysis import StatisticsSummary
from .analysis.admission import AdmissionDecision
from .analysis.attempt_record import ArmResult, PairedAttempt
from .analysis.headline import Headline, headline
from .contracts import Digest, PortablePath
from .errors import ContractError
from .publish.bundle_layout import (
    ADMISSIONS,
    RECORDS,
    SUMMARY_PATH,
    bundle_files,
    load_admissions,
    load_records,
    parse_document,
)
from .store import EntryKind, Store, walk_tree
from .store.lookup import resolve_digest

__all__ = ["BundleResults", "load_bundle", "tree_files"]


@dataclass(frozen=True)
class BundleResults:
    """What a bundle holds, typed: records and admissions by record digest, and the published summary."""

    where: str
    records: dict[Digest, PairedAttempt]
    admissions: dict[Digest, AdmissionDecision]
    summary: StatisticsSummary | None

    @property
    def headline(self) -> Headline:
        if self.summary is None:
            raise ContractError(f"{self.where} holds no {SUMMARY_PATH}: it was bundled but never published")
        return headline(self.summary)

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per arm of every record, in challenge and attempt order."""
        rows = []
        ordered = sorted(self.records.items(), key=lambda item: (item[1].key.challenge, item[1].attempt))
        for digest, record in ordered:
            decision = self.admissions.get(digest)
            for condition, arm in (("control", record.control), ("treatment", record.treatment)):
                rows.append(_row(digest, record, condition, arm, decision))
        return rows


def _row(
    digest: Digest, record: PairedAttempt, condition: str, arm: ArmResult | None, decision: AdmissionDecision | None
) -> dict[str, Any]:
    return {
        "record": str(digest),
        "challenge": record.key.challenge,
        "attempt": record.attempt,
        "condition": condition,
        "model": record.key.model,
        "build": record.build.label,
        "completion": record.completion.value,
        "admitted": decision is not None and decision.decision.value == "admitted",
        "admission_reason": None if decision is None else decision.reason.value,
        "outcome": None if arm is None else arm.outcome.value,
        "delivered": None if arm is None else arm.delivered,
        "delivered_via": None if arm is None else list(arm.delivered_via),
        "used": None if arm is None else arm.used,
        "tokens": None if arm is None else arm.tokens,
        "wall_seconds": None if arm is None else arm.wall_seconds,
        "key_id": str(record.key.key_id),
    }


def tree_files(
    store: Store, tree: Digest, wanted: Callable[[PortablePath], bool] | None = None
) -> dict[PortablePath, bytes]:
    """Every file of a stored tree by portable path (only those ``wanted`` when given), as
    :func:`bench.publish.bundle_layout.bundle_files` reads a directory."""
    entries = [
        (path, entry.digest)
        for path, entry in walk_tree(store, tree)
        if entry.kind is not EntryKind.DIRECTORY and (wanted is None or wanted(path))
    ]
    contents = dict(store.get_many([digest for _, digest in entries]))
    return {path: contents[digest] for path, digest in entries}


def load_bundle(where: str | Path, store: Store | str | Path | None = None) -> BundleResults:
    """The bundle in directory ``where``; or, given ``store``, the stored tree ``where`` names (a digest, a unique
    prefix of one, or a ref such as ``published/example``)."""
    if store is None:
        files = bundle_files(Path(where))
    else:
        opened = store if isinstance(store, Store) else Store(store)
        files = tree_files(opened, resolve_digest(opened, str(where)), _read_by_results)
    return results_of(files, str(where))


def _read_by_results(path: PortablePath) -> bool:
    """The files :func:`results_of` reads (records, admissions, the summary): a bundle's other thousand files (the
    pages, the lineage) are not read out of the store just to be dropped."""
    return path.parts[0] in (RECORDS, ADMISSIONS) or path == SUMMARY_PATH


def results_of(files: Mapping[PortablePath, bytes], where: str) -> BundleResults:
    records = {digest: record for digest, (_, record) in load_records(files).items()}
    admissions = {decision.record: decision for decision in load_admissions(files).values()}
    data = files.get(SUMMARY_PATH)
    summary = None if data is None else parse_document(SUMMARY_PATH, data, StatisticsSummary)
    return BundleResults(where=where, records=records, admissions=admissions, summary=summary)
