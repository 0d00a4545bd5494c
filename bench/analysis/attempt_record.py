"""The comparability key and the per-attempt paired record the analysis consumes.

A trend line only means something when every point asked the same question of the same model against the same
memory, so the key names everything that defines the question: challenge, fixture, model, how the model was
reached (the gateway mode and, in policy mode, the policy's digest: a deterministic stand-in is not a model),
both conditions (the treatment is the memory system by name and the graph arm it was restored from), the
preregistration manifest and verifier digests and the source commit. The build under test is deliberately not
in it: it is the thing whose effect we want to see (the memory system's version), so it is recorded with each data
point (``Build``) and a step in a trend can be traced to the build that caused it.

The runner and grading issues produce these records; this module only fixes the minimal shape the statistics
need.
"""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..contracts import ContractModel, DigestValue, Document, canonical_bytes
from ..gateway import Mode
from .retrieval import RetrievalResult

__all__ = [
    "PUBLIC_CONTRACTS",
    "ArmEnding",
    "ArmResult",
    "Build",
    "ComparabilityKey",
    "Completion",
    "Outcome",
    "PairedAttempt",
    "condition_system",
]

Name = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:@+/-]*$")]


class Outcome(StrEnum):
    """The verifier's binary reward for one arm of one attempt."""

    PASS = "pass"
    FAIL = "fail"


class Completion(StrEnum):
    """Whether the runner finished the attempt; admission is a separate, later decision."""

    COMPLETED = "completed"  # both arms finished
    ABORTED = "aborted"  # an arm did not finish (its ending says how), or the runner recorded no arm at all


class ArmEnding(StrEnum):
    """How one arm ended, read from what happened (the harness's exits, the deadline, the gateway's caps)."""

    FINISHED = "finished"  # every step exited 0 in time
    HARNESS_FAILED = "harness-failed"  # a step exited non-zero
    TIMED_OUT = "timed-out"  # killed at the challenge's agent deadline
    CAPPED = "capped"  # a budget cap stopped it: tokens or dollars at the gateway, or the wall-seconds budget
    CRASHED = "crashed"  # the apparatus failed: no session was written, so the harness never ran its task
    # The provider's fault, not the agent's nor the apparatus's: the gateway stopped the arm after consecutive
    # provider errors, or after a usage beyond its request's bounds; an arm never started after such a stop
    # in its attempt ends the same way.
    PROVIDER_FAILED = "provider-failed"
    PROVIDER_MALFORMED = "provider-malformed"
    ATTACHMENT_FAILED = "attachment-failed"  # the memory's attachment failed (a server, a hook, a file): no measure


class ComparabilityKey(ContractModel):
    """Everything that makes two data points the same question. Never contains the build under test.

    ``manifest`` is the preregistration's digest (``Preregistration.digest``), so a corrected version starts a
    new key and a new trend line.
    """

    challenge: Name
    fixture: DigestValue
    model: Name
    gateway_mode: Mode
    policy: DigestValue | None  # the policy the stand-in model answered from; None in forward mode
    control_condition: Name
    treatment_condition: Name
    manifest: DigestValue
    verifier: DigestValue
    source_commit: Annotated[str, Field(pattern=r"^([0-9a-f]{40}|[0-9a-f]{64})$")]
    # How many distractor documents were seeded beside the evidence (the fixture's pool, at the size this run
    # used): the same challenge under more noise is another question.
    distractors: Annotated[int, Field(ge=0)] = 0
    # The coding agent and its pinned version: the same memory under another agent is another question.
    harness: Name
    harness_version: Name

    @model_validator(mode="after")
    def _policy_in_policy_mode(self) -> ComparabilityKey:
        if (self.gateway_mode is Mode.POLICY) != (self.policy is not None):
            raise ValueError("the key names a policy digest exactly in gateway mode 'policy'")
        return self

    @property
    def key_id(self) -> DigestValue:
        """The key's own name: the digest of its canonical encoding (a value: the store never holds it)."""
        return DigestValue.of(canonical_bytes(self))


def condition_system(condition: str) -> str:
    """The memory system a treatment condition names: conditions are ``<system>:<graph arm>``
    (``run/suite_plan.py``)."""
    return condition.split(":", 1)[0]


class Build(ContractModel):
    """The build under test, recorded against each data point. ``sequence`` orders builds on a trend axis."""

    label: Name
    sequence: Annotated[int, Field(ge=0)]


class ArmResult(ContractModel):
    """One arm's three grading layers plus the continuous measures, and what admission reads besides them.

    ``ending`` is how the arm ended (a pair is completed only when both arms finished); ``audit_clean``,
    ``tampered`` and ``received_phrases`` are the validity facts each of which excludes a pair on its own.

    ``delivered_via`` names each channel a memory phrase arrived through (prompt-time retrieval and
    anchor-triggered recall are different mechanisms; a single boolean would report them as one).

    ``tokens`` and ``spent_usd`` are measurements only when ``usage_bounded`` is False.
    """

    outcome: Outcome
    ending: ArmEnding
    ending_note: Annotated[str, Field(max_length=2000)] = ""  # what happened, when it did not finish
    audit_clean: bool  # the mutation audit found nothing outside the allowed outputs
    tampered: tuple[Annotated[str, Field(max_length=400)], ...] = ()  # session file vs gateway disagreements
    # memory channels the arm's attachment did not install that reached its model (a hook, an MCP server, an
    # instructions file of the agent's own making): either arm's excludes the pair
    foreign_channels: tuple[Annotated[str, Field(max_length=400)], ...] = ()
    # what reached the model through a memory channel that the runner's copy of the restored state does not give
    # (a declared instructions file that differs from the file restore wrote): the pair is excluded
    not_rederived: tuple[Annotated[str, Field(max_length=400)], ...] = ()
    # the agent's own tool results carrying the memory's state (its files read by path or glob, printed by content):
    # an unintended channel; a treatment with any is excluded
    state_reads: tuple[Annotated[str, Field(max_length=400)], ...] = ()
    received_phrases: tuple[str, ...] = ()  # memory phrases anywhere in what the harness's conversation sent
    delivered: bool
    delivered_via: tuple[Annotated[str, Field(pattern=r"^[a-z][a-z-]*$")], ...] = ()
    used: bool
    tokens: Annotated[int, Field(ge=0)]
    wall_seconds: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    spent_usd: Annotated[Decimal, Field(ge=0, allow_inf_nan=False)] = Decimal(0)  # as the gateway metered it
    # True when some answer of the arm was charged its upper bound, not its reported usage (missing, unreadable or
    # beyond its request's bounds): ``spent_usd`` is then partly a bound and ``tokens`` is not what the provider
    # counted, so token and dollar statistics (and any per-token or per-dollar figure) leave the arm out.
    usage_bounded: bool = False


class PairedAttempt(Document):
    """One paired attempt: both arms ran the same task from the same start, so they are analysed as a pair."""

    kind: Literal["paired-attempt"] = "paired-attempt"
    schema_version: Literal[4] = 4
    key: ComparabilityKey
    build: Build
    attempt: Annotated[int, Field(ge=1)]
    completion: Completion
    control: ArmResult | None
    treatment: ArmResult | None
    # The money fence's checks of the attempt that were recorded unobserved (the quota API could not be read; the
    # drain check between arms fails open), by check name: the pair went on without that observation.
    unobserved_checks: tuple[Annotated[str, Field(pattern=r"^[a-z][a-z-]*$")], ...] = ()
    # What the treatment's memory retrieved for the challenge's prompt, when its retrieval is deterministic;
    # None: not measured (never a zero).
    retrieval: RetrievalResult | None = None

    @model_validator(mode="after")
    def _completed_has_both_arms(self) -> PairedAttempt:
        if self.completion is Completion.COMPLETED and (self.control is None or self.treatment is None):
            raise ValueError(
                f"attempt {self.attempt} of {self.key.challenge} is marked completed but lacks an arm result; "
                "a completed attempt records both arms (mark it aborted otherwise)"
            )
        arms = [arm for arm in (self.control, self.treatment) if arm is not None]
        finished = len(arms) == 2 and all(arm.ending is ArmEnding.FINISHED for arm in arms)
        if (self.completion is Completion.COMPLETED) != finished and len(arms) == 2:
            raise ValueError(
                f"attempt {self.attempt} of {self.key.challenge} is marked {self.completion.value}, but its arms ended "
                f"{[arm.ending.value for arm in arms]}: completed means both arms finished"
            )
        return self


# What `stele-bench schema` exports (listed in bench.contracts.registry by the lead).
PUBLIC_CONTRACTS = (ComparabilityKey, PairedAttempt)
