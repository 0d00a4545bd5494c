"""Admission: a recorded decision, never a status a finished run drifts into.

A completed run may contribute to a published number only through an ``AdmissionDecision`` with a reason code.
Excluded runs stay in the record whole (the decision points at the untouched record by digest); nothing here
edits a record, and there is deliberately no reason code for "the result went the wrong way".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..contracts import ContractModel, Digest, Document
from ..errors import ContractError
from .attempt_record import Completion, PairedAttempt

__all__ = [
    "PUBLIC_CONTRACTS",
    "Admission",
    "AdmissionDecision",
    "ExclusionCount",
    "ReasonCode",
    "admitted",
    "decide",
    "exclusion_counts",
]


class Admission(StrEnum):
    ADMITTED = "admitted"
    EXCLUDED = "excluded"


class ReasonCode(StrEnum):
    """Why a run was admitted or excluded. Only the first admits.

    A pair an arm of which did not finish is not completed, and each way of not finishing has its own code: the
    apparatus failing (no session was ever written), the agent running out of time, the harness exiting non-zero,
    a budget cap stopping the arm. None of them ever enters the analysis as a failure.
    """

    PREREGISTERED_COMPLETE = "preregistered-complete"  # completed under an unmoved preregistration
    NOT_COMPLETED = "not-completed"  # the runner did not finish both arms (no arm results recorded)
    SUPERSEDED_BY_CORRECTION = "superseded-by-correction"  # an apparatus correction created a new version
    PREREGISTRATION_MOVED = "preregistration-moved"  # something frozen had moved when it ran
    APPARATUS_FAULT = "apparatus-fault"  # the apparatus, not the agent or the system under test, failed
    CERTIFICATION_FAILED = "certification-failed"  # the challenge failed its leak certification
    FENCE_STOPPED = "fence-stopped"  # the money fence stopped the pair
    AGENT_TIMEOUT = "agent-timeout"  # an arm's agent was killed at the challenge's deadline
    HARNESS_FAILED = "harness-failed"  # an arm's harness exited non-zero
    CAPPED = "capped"  # a budget cap (tokens, dollars, wall seconds) stopped an arm
    MEMORY_INVALID = "memory-invalid"  # the snapshot showed the memory missing, empty or failing its probes
    # a deterministic memory's hook context, re-derived from the restored state, differs from what reached the model
    NOT_REDERIVED = "injected-not-rederived"
    TAMPERED = "tampered"  # an arm's session record disagrees with what the gateway saw
    CONTAMINATED = "contaminated"  # the control arm received a memory phrase
    CONTROL_CHANNEL = "control-channel"  # a memory channel reached the control's model (a hook, MCP server, file)
    UNINSTALLED_CHANNEL = "uninstalled-channel"  # a treatment's model got a memory channel its attachment lacks
    STATE_READ = "state-read"  # a treatment's agent read the memory's state by a tool of its own (path, glob, content)
    ATTACHMENT_FAILED = "attachment-failed"  # the memory's attachment failed: a server, a hook or a file
    UNDELIVERED = "undelivered"  # the treatment delivered nothing; preregistered as excluded
    UNDELIVERED_OWN_ROW = "undelivered-own-row"  # the treatment delivered nothing; preregistered for its own row
    AUDIT_DIRTY = "audit-dirty"  # an arm's tree changed outside allowed_output_paths: thrown out, never a FAIL
    PROVIDER_FAILED = "provider-failed"  # the model provider kept failing an arm's requests (a rerun retries it)
    PROVIDER_MALFORMED = "provider-malformed"  # the model provider reported a usage its request cannot have had


class AdmissionDecision(Document):
    """The decision about one durable record, which it names by digest."""

    kind: Literal["admission-decision"] = "admission-decision"
    schema_version: Literal[1] = 1
    record: Digest
    decision: Admission
    reason: ReasonCode
    note: Annotated[str, Field(max_length=2000)]

    @model_validator(mode="after")
    def _reason_matches_decision(self) -> AdmissionDecision:
        admits = self.reason is ReasonCode.PREREGISTERED_COMPLETE
        if admits != (self.decision is Admission.ADMITTED):
            raise ValueError(
                f"decision {self.decision.value!r} cannot carry reason {self.reason.value!r}: only "
                f"{ReasonCode.PREREGISTERED_COMPLETE.value!r} admits, every other reason excludes"
            )
        return self


def decide(record: Digest, attempt: PairedAttempt, reason: ReasonCode, note: str = "") -> AdmissionDecision:
    """Record a decision, refusing to admit a run the runner did not complete."""
    if reason is ReasonCode.PREREGISTERED_COMPLETE and attempt.completion is not Completion.COMPLETED:
        raise ContractError(
            f"record {record} (attempt {attempt.attempt} of {attempt.key.challenge}) is {attempt.completion.value}, "
            f"not completed; it cannot be admitted; exclude it with reason {ReasonCode.NOT_COMPLETED.value!r}"
        )
    decision = Admission.ADMITTED if reason is ReasonCode.PREREGISTERED_COMPLETE else Admission.EXCLUDED
    return AdmissionDecision(record=record, decision=decision, reason=reason, note=note)


def admitted(
    records: Mapping[Digest, PairedAttempt], decisions: Iterable[AdmissionDecision]
) -> dict[Digest, PairedAttempt]:
    """The admitted records. Every record needs exactly one decision and every decision a record (fail closed)."""
    by_record: dict[Digest, AdmissionDecision] = {}
    for decision in decisions:
        if decision.record not in records:
            raise ContractError(f"admission decision names record {decision.record}, which is not among the records")
        if decision.record in by_record:
            raise ContractError(f"record {decision.record} has two admission decisions; keep exactly one")
        by_record[decision.record] = decision
    undecided = sorted(set(records) - set(by_record))
    if undecided:
        raise ContractError(
            f"{len(undecided)} record(s) have no admission decision, first {undecided[0]}; "
            "completed is not admitted: record a decision for each"
        )
    chosen = {d: records[d] for d, decision in by_record.items() if decision.decision is Admission.ADMITTED}
    for digest, attempt in chosen.items():
        if attempt.completion is not Completion.COMPLETED:
            raise ContractError(f"record {digest} is admitted but was not completed; its decision is invalid")
    return chosen


class ExclusionCount(ContractModel):
    """How many of one treatment condition's pairs (its arms) were excluded for one reason."""

    condition: str  # the treatment condition, "<system>:<graph arm>", as the records' keys name it
    reason: ReasonCode
    pairs: int = Field(ge=1)


def exclusion_counts(
    records: Mapping[Digest, PairedAttempt], decisions: Iterable[AdmissionDecision]
) -> list[ExclusionCount]:
    """Per treatment condition and reason, the excluded pairs, sorted by condition and reason."""
    counted = Counter(
        (records[decision.record].key.treatment_condition, decision.reason)
        for decision in decisions
        if decision.decision is Admission.EXCLUDED and decision.record in records
    )
    return [ExclusionCount(condition=c, reason=r, pairs=n) for (c, r), n in sorted(counted.items())]


# What `stele-bench schema` exports (listed in bench.contracts.registry by the lead).
PUBLIC_CONTRACTS = (AdmissionDecision,)
