"""How an arm ended, read from what happened: the harness's exits, the deadline, the session, the budget's caps.

An arm finished only when every step exited 0 in time, a session was written, and it stayed within every cap the
preregistration froze. Anything else makes the pair not completed, and each way has its own reason code
(:class:`~bench.analysis.admission.ReasonCode`), so a crash of the apparatus is never read as a timeout of the
agent, and neither ever enters the analysis as a failed task.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.admission import ReasonCode
from ..analysis.attempt_record import ArmEnding, ArmResult
from ..analysis.prereg import Budget
from ..gateway.metering import ArmStop
from .arm_record import ArmRecord

__all__ = ["Ending", "arm_ending", "not_completed"]


@dataclass(frozen=True)
class Ending:
    ending: ArmEnding
    note: str  # what happened, in the record's words


def arm_ending(arm: ArmRecord, budget: Budget | None, tokens: int, attachment_failures: tuple[str, ...] = ()) -> Ending:
    """The arm's ending; the first that applies of the provider's stop, crashed, attachment failed
    (``attachment_failures``, the grade's: the memory never was what the arm measured), timed out, capped, harness
    failed, finished. The provider's stop comes first: what the harness did after its model stopped answering is the
    provider's doing."""
    exits = [(step.exit_code, step.timed_out) for step in arm.steps]
    if arm.stop is not None:
        ending = _PROVIDER_STOPS[arm.stop]
        if not arm.started:
            return Ending(ending, f"not started: an earlier arm of the attempt ended {arm.stop.value}")
        return Ending(ending, f"the gateway stopped the arm: {_STOP_NOTES[arm.stop]} (steps: {exits})")
    if arm.session is None:
        return Ending(ArmEnding.CRASHED, f"no session was written (steps' exits and timeouts: {exits})")
    if attachment_failures:
        return Ending(ArmEnding.ATTACHMENT_FAILED, "; ".join(attachment_failures))
    if any(step.timed_out for step in arm.steps):
        return Ending(ArmEnding.TIMED_OUT, f"a step was killed at the deadline (steps: {exits})")
    cents = arm.spent_usd * 100
    wall = sum(step.seconds for step in arm.steps)
    caps = [
        (
            arm.cap_refusals > 0 or (arm.cap_usd is not None and arm.spent_usd >= arm.cap_usd),
            f"spent {arm.spent_usd} USD, reaching the arm's cap {arm.cap_usd} "
            f"({arm.cap_refusals} request(s) refused for want of room under it)",
        )
    ]
    if budget is not None:  # None: a reader without the preregistration (the gateway's own cap still shows)
        caps += [
            (tokens > budget.max_tokens_per_arm, f"{tokens} tokens, cap {budget.max_tokens_per_arm}"),
            (wall > budget.max_wall_seconds_per_arm, f"{wall:.1f} wall s, cap {budget.max_wall_seconds_per_arm}"),
            (
                budget.max_usd_cents_per_arm > 0 and cents > budget.max_usd_cents_per_arm,
                f"spent {arm.spent_usd} USD, cap {budget.max_usd_cents_per_arm} cents",
            ),
        ]
    hit = [note for capped, note in caps if capped]
    if hit:  # first: a cap the gateway enforced makes the harness exit non-zero, and the cap is why
        return Ending(ArmEnding.CAPPED, "; ".join(hit))
    if any(step.exit_code != 0 for step in arm.steps):
        return Ending(ArmEnding.HARNESS_FAILED, f"a step exited non-zero (steps: {exits})")
    return Ending(ArmEnding.FINISHED, "every step exited 0 in time")


_PROVIDER_STOPS = {
    ArmStop.PROVIDER_FAILED: ArmEnding.PROVIDER_FAILED,
    ArmStop.PROVIDER_MALFORMED: ArmEnding.PROVIDER_MALFORMED,
}
_STOP_NOTES = {
    ArmStop.PROVIDER_FAILED: "the provider failed its consecutive requests up to the preregistered limit",
    ArmStop.PROVIDER_MALFORMED: "an answer reported a usage beyond its request's bounds, charged the bound",
}
_REASONS = {
    ArmEnding.CRASHED: ReasonCode.APPARATUS_FAULT,
    ArmEnding.TIMED_OUT: ReasonCode.AGENT_TIMEOUT,
    ArmEnding.HARNESS_FAILED: ReasonCode.HARNESS_FAILED,
    ArmEnding.CAPPED: ReasonCode.CAPPED,
    ArmEnding.PROVIDER_FAILED: ReasonCode.PROVIDER_FAILED,
    ArmEnding.PROVIDER_MALFORMED: ReasonCode.PROVIDER_MALFORMED,
    ArmEnding.ATTACHMENT_FAILED: ReasonCode.ATTACHMENT_FAILED,
}


def not_completed(arms: dict[str, ArmResult | None]) -> tuple[ReasonCode, str] | None:
    """The reason code of a pair an arm of which did not finish, or None when both did: the provider's stop, if
    either arm has one (the other arm's ending follows from it), else the first such arm's."""
    missing = [name for name, arm in arms.items() if arm is None]
    if missing:
        return ReasonCode.NOT_COMPLETED, f"the runner recorded no result for the {', '.join(missing)} arm"
    unfinished = [(name, arm) for name, arm in arms.items() if arm is not None and arm.ending is not ArmEnding.FINISHED]
    if not unfinished:
        return None
    name, arm = min(unfinished, key=lambda found: found[1].ending not in _PROVIDER_STOPS.values())
    return _REASONS[arm.ending], f"the {name} arm {arm.ending.value}: {arm.ending_note}"
