"""Re-derive what a deterministic memory injected, and compare it with what reached the model.

A memory system whose restore declares its retrieval deterministic
(:class:`~bench.provision.messages.RetrievalDeclaration`) promises that its hooks' context is a function of the
restored state and the hook's input alone. So after its treatment arm ran, and before its memory is destroyed, the
runner rebuilds every hook input from the arm's gateway log (the prompts the harness sent; each tool call whose
result the harness carried, for a ``PostToolUse`` hook whose matcher names the tool), asks the provisioner's
``retrieve`` verb what its hooks would inject for each, and compares that with the hook context the harness placed
in its conversation (:func:`~bench.grading.gateway_view.hook_contexts`), place by place: the message a context
sits in, the hook that placed it and its text.

A difference either way is a finding on the pair: context that reached the model but is not what the memory would
produce, or context the memory would produce that never reached it. Either way the delivery evidence is not the
memory system's, so admission excludes the pair (``injected-not-rederived``). A refused ``retrieve`` is a finding
too: a system that declared determinism and cannot show it fails closed. Only the hook events whose input the
gateway log holds are re-derived (``UserPromptSubmit``, ``PostToolUse``); the receipt names the hooks of any other
context it saw and did not re-derive.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Annotated, Literal

from pydantic import Field, ValidationError

from ..contracts import ContractModel, Digest, Document
from ..gateway.exchange import ExchangeRecord
from ..grading.chain import Conversation, RunnerRecord, harness_conversation
from ..grading.gateway_view import hook_contexts, tool_calls, tool_results, user_prompts
from ..grading.memory_declaration import InstalledHook
from ..provision import ProvisionRefused
from ..provision.messages import RETRIEVE_BATCH, HookEvent, HookEventName
from ..provision.protocol_call import CallRecord
from ..sandbox.layout import WORKSPACE
from .arm_record import ConditionName

__all__ = ["PUBLIC_CONTRACTS", "InjectedRederivation", "PlacedContext", "Retrieve", "hook_events", "rederive_injected"]

_QUOTED = 160  # characters of a context quoted in a finding
_EVENTS = frozenset(name.value for name in HookEventName)
# The provisioner's retrieve for one restored project, as a blocking call: one batch of events, the call log.
Retrieve = Callable[[tuple[HookEvent, ...], list[CallRecord]], tuple[str | None, ...]]


class PlacedContext(ContractModel):
    """One hook context at its place in the conversation: the message it sits in and the hook that placed it."""

    message: int = Field(ge=0)
    hook: str
    text: str


class InjectedRederivation(Document):
    """What the memory's ``retrieve`` re-derived for one treatment arm's hook inputs, and how it compared."""

    kind: Literal["injected-rederivation"] = "injected-rederivation"
    schema_version: Literal[1] = 1
    system: ConditionName
    exchanges: Digest  # the arm's gateway log, which the hook inputs were rebuilt from
    events: int = Field(ge=0)  # hook inputs sent to retrieve
    rederived: tuple[PlacedContext, ...]  # what retrieve answered, placed where the harness would put it
    received: int = Field(ge=0)  # installed-hook contexts of the re-derived events found in the conversation
    not_covered: tuple[str, ...]  # hooks of other contexts the conversation carried (their input is not logged)
    findings: tuple[Annotated[str, Field(max_length=2000)], ...]  # empty: every context re-derived and matched
    calls: tuple[CallRecord, ...]  # the retrieve calls, refused ones included
    seconds: float = Field(ge=0)

    @property
    def matches(self) -> bool:
        return not self.findings


def _covered(hooks: Sequence[InstalledHook], hook: str) -> bool:
    return any(installed.matches(hook) for installed in hooks)


def hook_events(conversation: Conversation, hooks: Sequence[InstalledHook]) -> list[tuple[int, str, HookEvent]]:
    """Every hook input the conversation shows an installed hook was given: (message, hook name, input)."""
    events: list[tuple[int, str, HookEvent]] = []
    prompt_hook = HookEventName.USER_PROMPT_SUBMIT.value
    if _covered(hooks, prompt_hook):
        for message, prompt in user_prompts(conversation):
            event = HookEvent(hook_event_name=HookEventName.USER_PROMPT_SUBMIT, cwd=WORKSPACE, prompt=prompt)
            events.append((message, prompt_hook, event))
    inputs = {call.id: call.ran for call in tool_calls(conversation)}
    for result in tool_results(conversation):
        hook = f"{HookEventName.POST_TOOL_USE.value}:{result.tool}"
        given = inputs.get(result.tool_use_id)
        # The harness runs PostToolUse after a tool succeeded, on the input as it ran the call.
        if result.is_error or not result.tool or not isinstance(given, dict) or not _covered(hooks, hook):
            continue
        try:
            event = HookEvent(
                hook_event_name=HookEventName.POST_TOOL_USE, cwd=WORKSPACE, tool_name=result.tool, tool_input=given
            )
        except ValidationError:
            # A call the protocol cannot carry (a tool name past its bound) is not asked about: any context the
            # harness placed after its result then has no re-derived counterpart and is a finding.
            continue
        events.append((result.message, hook, event))
    return events


def _findings(rederived: Sequence[PlacedContext], received: Sequence[PlacedContext]) -> list[str]:
    # Sets, as hook_contexts keeps one context per place (message, hook, text).
    mine = {(c.message, c.hook, c.text) for c in rederived}
    theirs = {(c.message, c.hook, c.text) for c in received}
    findings = [
        f"message {message}: {hook} context reached the model but is not what the memory re-derives: {text[:_QUOTED]!r}"
        for message, hook, text in sorted(theirs - mine)
    ]
    findings += [
        f"message {message}: the memory re-derives {hook} context that never reached the model: {text[:_QUOTED]!r}"
        for message, hook, text in sorted(mine - theirs)
    ]
    return findings


def _retrieve_all(
    retrieve: Retrieve, events: Sequence[HookEvent], log: list[CallRecord]
) -> tuple[tuple[str | None, ...], str | None]:
    """Every event's context, in batches; on a refusal, what came back so far and the refusal as a finding."""
    contexts: list[str | None] = []
    for start in range(0, len(events), RETRIEVE_BATCH):
        try:
            contexts += retrieve(tuple(events[start : start + RETRIEVE_BATCH]), log)
        except ProvisionRefused as refused:
            return tuple(contexts), f"retrieve was refused ({refused.reason_code.value}): {refused}"
    return tuple(contexts), None


def rederive_injected(
    system: str,
    exchanges_digest: Digest,
    exchanges: Sequence[ExchangeRecord],
    hooks: Sequence[InstalledHook],
    retrieve: Retrieve,
    runner: RunnerRecord,
) -> InjectedRederivation:
    """Re-derive every covered hook context of the arm whose gateway log is ``exchanges`` (its conversation chained
    from ``runner``, the runner's own record of the arm) and compare."""
    started = time.monotonic()
    conversation = harness_conversation(exchanges, runner)
    planned = hook_events(conversation, hooks)
    calls: list[CallRecord] = []
    contexts, refused = _retrieve_all(retrieve, [event for _, _, event in planned], calls)
    rederived = [
        PlacedContext(message=message, hook=hook, text=context.strip())
        for (message, hook, _), context in zip(planned, contexts, strict=False)
        if context is not None and context.strip()
    ]
    placed = [context for context in hook_contexts(conversation) if _covered(hooks, context.hook)]
    covered = [c for c in placed if c.hook.partition(":")[0] in _EVENTS]
    received = [PlacedContext(message=c.message, hook=c.hook, text=c.text) for c in covered]
    findings = [refused] if refused is not None else _findings(rederived, received)
    return InjectedRederivation(
        system=system,
        exchanges=exchanges_digest,
        events=len(planned),
        rederived=tuple(rederived),
        received=len(received),
        not_covered=tuple(sorted({c.hook for c in placed} - {c.hook for c in covered})),
        findings=tuple(finding[:2000] for finding in findings),
        calls=tuple(calls),
        seconds=time.monotonic() - started,
    )


PUBLIC_CONTRACTS: tuple[type[ContractModel], ...] = (InjectedRederivation,)
