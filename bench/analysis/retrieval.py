"""Retrieval quality: how much of a challenge's oracle the memory's own retrieval put in front of the model.

For a memory system whose retrieval is deterministic, the runner asks its ``retrieve`` verb what it would recall for
the challenge's own prompt and records the documents it names, best first (:class:`RetrievalResult`, in each paired
record). Against the challenge's oracle documents, at each preregistered depth k:

- recall@k = |oracle among the first k| / |oracle|;
- precision@k = |oracle among the first k| / k (a list shorter than k counts its missing places as misses).

A system without deterministic retrieval, or one whose ``retrieve`` names no documents, is *not measured*, never
scored zero; a challenge with no oracle (a low-memory control) has no recall to measure. Per cell the summary
reports the mean over its attempts, exactly (fractions), as floats.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from fractions import Fraction
from typing import Annotated

from pydantic import Field

from ..contracts import ContractModel, PortablePath

__all__ = ["DepthScore", "RetrievalResult", "RetrievalStatus", "RetrievalSummary", "recall_precision", "summarize"]


class RetrievalResult(ContractModel):
    """What the treatment's memory retrieved for its challenge's prompt; ``retrieved`` None: it named nothing."""

    oracle: tuple[PortablePath, ...]
    depths: Annotated[tuple[Annotated[int, Field(ge=1, le=50)], ...], Field(min_length=1)]
    retrieved: tuple[PortablePath, ...] | None
    note: Annotated[str, Field(max_length=2000)] = ""  # why nothing was named (a refusal, say)


class RetrievalStatus(StrEnum):
    MEASURED = "measured"
    NOT_MEASURED = "not-measured"  # no deterministic retrieval, or a retrieve that names no documents
    NO_ORACLE = "no-oracle"  # the challenge names no oracle documents: nothing to recall


class DepthScore(ContractModel):
    k: int
    recall: float  # mean over the measured attempts
    precision: float


class RetrievalSummary(ContractModel):
    status: RetrievalStatus
    attempts: int  # attempts measured
    oracle: int  # oracle documents of the challenge
    depths: list[DepthScore]
    note: str = ""


def recall_precision(oracle: Sequence[str], retrieved: Sequence[str], k: int) -> tuple[Fraction, Fraction]:
    """Recall@k and precision@k of ``retrieved`` (best first) against ``oracle``, exactly."""
    found = len(set(retrieved[:k]) & set(oracle))
    return Fraction(found, len(set(oracle))), Fraction(found, k)


def summarize(results: Sequence[RetrievalResult | None]) -> RetrievalSummary:
    """One cell's retrieval: the mean recall and precision at each depth over the attempts it was measured in."""
    present = [result for result in results if result is not None]
    if not present or len(present) < len(results):
        note = "the memory system declares no deterministic retrieval"
        return RetrievalSummary(status=RetrievalStatus.NOT_MEASURED, attempts=0, oracle=0, depths=[], note=note)
    oracle, depths = present[0].oracle, present[0].depths
    if not oracle:
        note = "the challenge names no oracle documents"
        return RetrievalSummary(status=RetrievalStatus.NO_ORACLE, attempts=0, oracle=0, depths=[], note=note)
    named = [result.retrieved for result in present if result.retrieved is not None]
    if len(named) < len(present):
        note = next(result.note for result in present if result.retrieved is None) or "retrieve named no documents"
        return RetrievalSummary(
            status=RetrievalStatus.NOT_MEASURED, attempts=0, oracle=len(oracle), depths=[], note=note
        )
    scores = []
    for k in depths:
        pairs = [recall_precision(oracle, retrieved, k) for retrieved in named]
        recall = sum((r for r, _ in pairs), Fraction(0)) / len(pairs)
        precision = sum((p for _, p in pairs), Fraction(0)) / len(pairs)
        scores.append(DepthScore(k=k, recall=float(recall), precision=float(precision)))
    return RetrievalSummary(
        status=RetrievalStatus.MEASURED, attempts=len(named), oracle=len(set(oracle)), depths=scores
    )
