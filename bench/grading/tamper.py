"""The session file against the gateway: every record the grade relies on must be one the model was really sent.

The session JSONL is the source of the normalised transcript, but the agent's user owns it and can append,
change or delete records while it runs. So each record grading relies on is matched with the harness's
conversation in the gateway log (:mod:`.chain`), which the agent cannot write:

- injected context: each hook's context in the transcript with the same hook's context placed by the harness in
  the conversation, as multisets (an added record and a deleted one both show), and each user-level instruction
  file the session file says was loaded with that file's contents as the harness placed them;
- the agent's tool calls with the calls the model's answers made (id, name, input);
- tool results with the results the conversation carried (id, and the tool's output without reminder blocks at
  its end, on both sides: the harness appends its own there in what it sends, never in the session file);
- the prompts the transcript records with the text the conversation carried.

A difference is a finding that marks the arm tampered; a conversation that forks (two requests continuing one
request) is one too. The findings name what differs, never the agent's intent.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from ..contracts import canonical_json
from .chain import Conversation
from .delivered import hook_of
from .gateway_view import hook_contexts, split_reminders, static_contexts, tool_calls, tool_results, user_texts
from .transcript import Channel, StepSource, Transcript

__all__ = ["tamper_findings"]

_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _compare(what: str, transcript: Iterable[str], gateway: Iterable[str]) -> list[str]:
    """Findings for items the transcript has beyond the gateway's (added) and the other way (missing)."""
    mine, theirs = Counter(transcript), Counter(gateway)
    findings = [f"{what} in the session file but never sent to the model: {item[:160]!r}" for item in mine - theirs]
    findings += [
        f"{what} sent to the model but missing from the session file: {item[:160]!r}" for item in theirs - mine
    ]
    return findings


def _call(call: str, name: str, given: object) -> str:
    return f"{call} {name} {canonical_json(given).decode()}"


def tamper_findings(transcript: Transcript, conversation: Conversation) -> tuple[str, ...]:
    """What the session file and the harness's conversation disagree on; empty when they agree."""
    findings = [
        f"exchange {s} continues an earlier request a second time: the conversation forks" for s in conversation.forks
    ]
    if not conversation.members:
        if transcript.steps:
            findings.append("the session file records a conversation the gateway never saw")
        return tuple(findings)
    injected = [f"{hook_of(s)}: {_norm(s.text)}" for s in transcript.by_source(StepSource.INJECTED)]
    files = {hook_of(s) for s in transcript.by_source(StepSource.INJECTED) if s.channel is Channel.STATIC_CONTEXT}
    contexts = hook_contexts(conversation) + static_contexts(conversation, files)
    placed = [f"{c.hook}: {_norm(c.text)}" for c in contexts]
    findings += _compare("injected context", injected, placed)
    calls = [
        _call(call.id, call.name, call.input)
        for step in transcript.by_source(StepSource.AGENT)
        for call in step.tool_calls
    ]
    sent = [_call(call.id, call.name, call.input) for call in tool_calls(conversation)]
    findings += _compare("a tool call", calls, sent)
    results = [
        f"{result.tool_use_id}: {_norm(split_reminders(result.text)[0])}"
        for step in transcript.by_source(StepSource.TOOL)
        for result in step.tool_results
    ]
    carried = [f"{result.tool_use_id}: {_norm(result.output)}" for result in tool_results(conversation)]
    findings += _compare("a tool result", results, carried)
    prompts = [_norm(step.text) for step in transcript.by_source(StepSource.USER)]
    findings += _compare("a user message", prompts, [_norm(text) for text in user_texts(conversation)])
    return tuple(findings)
