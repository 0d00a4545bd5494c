"""What the fence leaves in a pair's record: one document per check, and one listing them in order."""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from typing import Literal

from pydantic import AwareDatetime, Field

from ..contracts import Digest, Document, Sha256

__all__ = ["CheckName", "CheckVerdict", "FenceCheck", "FenceOutcome", "FenceRecord", "FenceResume"]


class CheckName(StrEnum):
    """The four checks, in the order they run, and the pair cap's, recorded when it stops an attempt."""

    KEY_IDENTITY = "key-identity"
    KEY_BUDGET = "key-budget"
    SHARED_HEADROOM = "shared-headroom"
    OBSERVED_DRAIN = "observed-drain"
    PAIR_CAP = "pair-cap"  # before an arm: what its pairs already spent leaves it room under the pair cap


class CheckVerdict(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    UNOBSERVED = "unobserved"  # the provider could not be reached; the check did not run, and says so
    NOT_APPLICABLE = "not-applicable"  # nothing is spent, so there is nothing to check


class FenceOutcome(StrEnum):
    CLEARED = "cleared"  # the pair may go on (an unobserved drain check clears: it fails open)
    STOPPED = "stopped"  # the pair must not start, or its next arm must not start
    NOT_APPLICABLE = "not-applicable"  # no paid provider: the fence was not run, deliberately


class FenceCheck(Document):
    """One check of one pair. ``observed_usd`` holds the numbers the verdict was decided on, exactly."""

    kind: Literal["fence-check"] = "fence-check"
    schema_version: Literal[1] = 1
    pair: str = Field(min_length=1)
    check: CheckName
    verdict: CheckVerdict
    observed_usd: dict[str, Decimal]
    reason: str = Field(min_length=1)
    checked_at: AwareDatetime


class FenceRecord(Document):
    """The checks of a pair so far, in the order they ran; a later record of the same pair supersedes it."""

    kind: Literal["fence-record"] = "fence-record"
    schema_version: Literal[1] = 1
    pair: str = Field(min_length=1)
    outcome: FenceOutcome
    checks: tuple[Digest, ...]
    # The operator's decision (FenceResume) the account spends under, when an earlier stop of it was lifted.
    resumed: Digest | None = None


class FenceResume(Document):
    """An operator's decision that an account a fence stop latched may spend again, and why."""

    kind: Literal["fence-resume"] = "fence-resume"
    schema_version: Literal[1] = 1
    account: Sha256  # the fingerprint of the provider key the stop latched
    stop: Digest  # the FenceRecord of the stop this decision lifts
    reason: str = Field(min_length=1, max_length=2000)
    resumed_at: AwareDatetime


PUBLIC_CONTRACTS = (FenceCheck, FenceRecord, FenceResume)
