"""The grade of one arm attempt: three layers and the exploration effort, each its own field.

None implies another: memory can be delivered and ignored, used and still fail, or absent while the task
passes. The outcome is taken as given (the verifier's result and the mutation audit's verdict).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..contracts import ContractModel, Document
from ..gateway.exchange import ExchangeRecord
from ..harness.transcript import HOOK_RECORD, HOOK_SUCCESS, StepSource, Transcript
from .chain import Conversation, RunnerRecord, harness_conversation
from .delivered import hook_of
from .delivery import DeliveryGrade, answered, grade_delivery, received_contexts
from .effort import ExplorationEffort, measure_effort
from .gateway_view import static_contexts
from .memory_declaration import MemoryDeclaration
from .restored import RestoredState
from .used import UseGrade, grade_use

__all__ = ["Grade", "OutcomeGrade", "attachment_failures", "grade", "hook_errors"]


class OutcomeGrade(ContractModel):
    verifier_passed: bool
    audit_clean: bool  # anything outside the allowed outputs forces reward zero

    @property
    def passed(self) -> bool:
        return self.verifier_passed and self.audit_clean


class Grade(Document):
    kind: Literal["grade"] = "grade"
    schema_version: Literal[3] = 3
    session_id: str
    delivered: DeliveryGrade
    hook_errors: tuple[str, ...] = ()  # "<hook>: <what it wrote>" for each hook that failed, in order
    # The memory's attachment failing, as the harness showed it: a declared MCP server not connected, an installed
    # hook that failed on every call, a declared file the harness never loaded. Such an arm is no measurement of
    # the memory: it ends attachment-failed (bench.agent.arm_ending).
    attachment_failures: tuple[str, ...] = ()
    used: UseGrade
    outcome: OutcomeGrade
    effort: ExplorationEffort


def _hook_records(transcript: Transcript) -> list[tuple[str, bool, str]]:
    """Every hook record of the transcript: (the hook's name, whether it succeeded, what it wrote)."""
    records = [(hook_of(step), True, step.text) for step in transcript.by_source(StepSource.INJECTED) if hook_of(step)]
    for step in transcript.by_source(StepSource.SYSTEM):
        if step.origin.startswith(HOOK_RECORD):
            records.append((step.origin.split(":", 2)[-1], step.origin.startswith(HOOK_SUCCESS), step.text))
    return records


def hook_errors(transcript: Transcript) -> tuple[str, ...]:
    """The hooks that failed, as the transcript's hook records say (the parser keeps them as system steps)."""
    return tuple(f"{hook}: {text[:400]}" for hook, ok, text in _hook_records(transcript) if not ok)


def attachment_failures(
    transcript: Transcript, conversation: Conversation, memory: MemoryDeclaration
) -> tuple[str, ...]:
    """Where the arm's attachment failed: a declared MCP server any run reported not connected (or did not list),
    an installed hook with failures and no success, a declared instructions file the harness never loaded."""
    failures: list[str] = []
    for name in memory.tool_servers:
        for run in range(transcript.runs):
            found = [s for s in transcript.servers if s.step == run and s.name == name]
            status = found[0].status if found else "missing"
            if status != "connected":
                error = f": {found[0].error}" if found and found[0].error else ""
                failures.append(f"MCP server {name} {status} in step {run}{error}")
    records = _hook_records(transcript)
    for installed in memory.hooks or ():
        mine = [(ok, text) for hook, ok, text in records if installed.matches(hook)]
        if mine and not any(ok for ok, _ in mine):
            failures.append(f"hook {installed.event} failed on every call ({len(mine)}): {mine[-1][1][:300]}")
    loaded = {context.hook for context in static_contexts(conversation, memory.static_files) if context.text}
    failures += [
        f"instructions file {path} never reached the model" for path in memory.static_files if path not in loaded
    ]
    return tuple(failures)


def grade(
    transcript: Transcript,
    exchanges: Sequence[ExchangeRecord],
    memory: MemoryDeclaration,
    outcome: OutcomeGrade,
    runner: RunnerRecord,
    state: RestoredState | None = None,
) -> Grade:
    """``runner`` is the runner's own record of the arm (its prompts, cwd and step times): the conversation is
    chained from it. ``state`` is the runner's copy of the memory's restored state, taken before the arm ran."""
    conversation = harness_conversation(exchanges, runner)
    return Grade(
        session_id=transcript.session_id,
        delivered=grade_delivery(transcript, conversation, memory, state),
        hook_errors=hook_errors(transcript),
        attachment_failures=attachment_failures(transcript, conversation, memory),
        used=grade_use(conversation, memory, received_contexts(answered(conversation), memory)),
        outcome=outcome,
        effort=measure_effort(transcript),
    )
