"""The session file against the gateway: the session file only cross-checks, and any disagreement is a finding.

The session JSONL is the agent's user's own file: it can append, change or delete records while it runs. Grading
reads what reached the model from the harness's conversation in the gateway log (:mod:`.chain`), which also
carries its own findings; the session file is matched against it, record by record:

- injected context: each hook's context in the transcript with the same hook's context placed by the harness in
  the conversation, as multisets (an added record and a deleted one both show), and each user-level instruction
  file the session file says was loaded with that file's contents as the harness placed them;
- the agent's tool calls with the calls the model's answers made, by id (name, and input as the harness ran it:
  :mod:`.repeats`);
- tool results with the results the conversation carried (id, and the tool's output without reminder blocks at
  its end, on both sides: the harness appends its own there in what it sends, never in the session file);
- the prompts the transcript records with the text the conversation carried.

Every finding (:class:`~.findings.TamperFinding`) names where it is: the conversation's message for what the model
was sent, the transcript's step for what only the session file holds.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..contracts import canonical_json
from ..gateway.neutral import ToolCallPart
from ..harness.transcript import Channel, StepSource, Transcript, call_input
from .chain import Conversation
from .delivered import hook_of
from .findings import TamperFinding, TamperKind
from .gateway_view import hook_contexts, static_contexts, tool_calls, tool_results, user_prompts
from .repeats import same_call

__all__ = ["tamper_findings"]

_QUOTED = 160


def _norm(text: str) -> str:
    # split() breaks on exactly what \s matches (str.isspace) and drops the ends: the regex's runs-to-one-space and
    # strip, at a third of its time over a session's tool outputs.
    return " ".join(text.split())


def _compare(what: str, session: Iterable[tuple[int, str]], sent: Iterable[tuple[int, str]]) -> list[TamperFinding]:
    """Findings for items (step or message index, text) on one side only, matched as multisets of their text."""
    unmatched_sent = list(sent)
    findings: list[TamperFinding] = []
    for step, item in session:
        match = next((n for n, (_, other) in enumerate(unmatched_sent) if other == item), None)
        if match is None:
            findings.append(
                TamperFinding(
                    kind=TamperKind.SESSION_ADDED,
                    step=step,
                    detail=f"{what} the model was never sent: {item[:_QUOTED]!r}",
                )
            )
        else:
            del unmatched_sent[match]
    findings += [
        TamperFinding(
            kind=TamperKind.SESSION_MISSING,
            message=message,
            detail=f"{what} the session file does not record: {item[:_QUOTED]!r}",
        )
        for message, item in unmatched_sent
    ]
    return findings


def _call_findings(transcript: Transcript, conversation: Conversation) -> list[TamperFinding]:
    """The agent's calls in the session file against the model's own, by id."""
    made = {call.id: call for call in tool_calls(conversation)}
    recorded = [(step.index, call) for step in transcript.by_source(StepSource.AGENT) for call in step.tool_calls]
    findings = []
    for step, call in recorded:
        model = made.pop(call.id, None)
        given = ToolCallPart.model_construct(id=call.id, name=call.name, arguments=call.input)
        # the model's call as the transcript holds one: a free-form tool's text input under ``input``
        made_call = (
            None
            if model is None
            else ToolCallPart.model_construct(id=call.id, name=model.name, arguments=call_input(model.input))
        )
        if made_call is None or not same_call(made_call, given, conversation.cwd, conversation.harness):
            detail = f"tool call {call.id} {call.name} {canonical_json(call.input).decode()}"
            findings.append(
                TamperFinding(
                    kind=TamperKind.SESSION_ADDED, step=step, detail=f"{detail[:300]}: not as the model made it"
                )
            )
    findings += [
        TamperFinding(
            kind=TamperKind.SESSION_MISSING,
            exchange=call.sequence,
            message=call.message,
            detail=f"the model's tool call {call.id} {call.name} is not in the session file",
        )
        for call in made.values()
    ]
    return findings


def tamper_findings(transcript: Transcript, conversation: Conversation) -> tuple[TamperFinding, ...]:
    """What the conversation itself and the session file against it show; empty when both are the harness's."""
    findings = list(conversation.findings)
    if not conversation.members:
        if transcript.steps:
            findings.append(
                TamperFinding(
                    kind=TamperKind.SESSION_ADDED,
                    detail="the session file records a conversation the gateway never saw",
                )
            )
        return tuple(findings)
    injected = [(s.index, f"{hook_of(s)}: {_norm(s.text)}") for s in transcript.by_source(StepSource.INJECTED)]
    files = {hook_of(s) for s in transcript.by_source(StepSource.INJECTED) if s.channel is Channel.STATIC_CONTEXT}
    contexts = hook_contexts(conversation) + static_contexts(conversation, files)
    findings += _compare("injected context", injected, [(c.message, f"{c.hook}: {_norm(c.text)}") for c in contexts])
    findings += _call_findings(transcript, conversation)
    split = conversation.harness.injection.split_tool_output
    results = [
        (step.index, f"{result.tool_use_id}: {_norm(split(result.text)[0])}")
        for step in transcript.by_source(StepSource.TOOL)
        for result in step.tool_results
    ]
    carried = [(r.message, f"{r.tool_use_id}: {_norm(r.output)}") for r in tool_results(conversation)]
    findings += _compare("a tool result", results, carried)
    prompts = [(step.index, _norm(step.text)) for step in transcript.by_source(StepSource.USER)]
    findings += _compare("a user message", prompts, [(m, _norm(text)) for m, text in user_prompts(conversation)])
    return tuple(findings)
