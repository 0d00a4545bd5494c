"""How an arm ended, read from what happened: the harness's exits, the deadline, the session, the budget's caps.

An arm finished only when every step exited 0 in time, a session was written, and it stayed within every cap the
preregistration froze. Anything else makes the pair not completed, and each way has its own reason code
(:class:`~bench.analysis.admission.ReasonCode`), so a crash of the apparatus is never read as a timeout of the
agent, and neither ever enters the analysis as a failed task.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..agent.arm_record import ArmRecord
from ..analysis.admission import ReasonCode
from ..analysis.attempt_record import ArmEnding, ArmResult
from ..analysis.prereg import Budget

__all__ = ["Ending", "arm_ending", "not_completed"]


@dataclass(frozen=True)
class Ending:
    ending: ArmEnding
    note: str  # what happened, in the record's words


def arm_ending(arm: ArmRecord, budget: Budget | None, tokens: int, attachment_failures: tuple[str, ...] = ()) -> Ending:
    """The arm's ending; the first that applies of crashed, attachment failed (``attachment_failures``, the grade's:
    the memory never was what the arm measured), timed out, capped, harness failed, finished."""
    exits = [(step.exit_code, step.timed_out) for step in arm.steps]
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
            arm.cap_usd is not None and arm.spent_usd >= arm.cap_usd,
            f"spent {arm.spent_usd} USD, reaching the arm's cap {arm.cap_usd}",
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


_REASONS = {
    ArmEnding.CRASHED: ReasonCode.APPARATUS_FAULT,
    ArmEnding.TIMED_OUT: ReasonCode.AGENT_TIMEOUT,
    ArmEnding.HARNESS_FAILED: ReasonCode.HARNESS_FAILED,
    ArmEnding.CAPPED: ReasonCode.CAPPED,
    ArmEnding.ATTACHMENT_FAILED: ReasonCode.ATTACHMENT_FAILED,
}


def not_completed(arms: dict[str, ArmResult | None]) -> tuple[ReasonCode, str] | None:
    """The reason code of a pair an arm of which did not finish (the first such arm's), or None when both did."""
    missing = [name for name, arm in arms.items() if arm is None]
    if missing:
        return ReasonCode.NOT_COMPLETED, f"the runner recorded no result for the {', '.join(missing)} arm"
    for name, arm in arms.items():
        assert arm is not None
        if arm.ending is not ArmEnding.FINISHED:
            return _REASONS[arm.ending], f"the {name} arm {arm.ending.value}: {arm.ending_note}"
    return None
