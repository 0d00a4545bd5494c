"""The transcript viewer: one static page per attempt, every arm side by side, step by step.

Each column is one arm (the shared control first, then each memory system's treatment). It opens with what the arm
came to: its outcome and how it ended, through which channels memory reached its model, whether the agent used it,
and the admission of the pair(s) it belongs to. Then the steps: the prompts, the assistant's text, tool calls and
their results, and the context a hook injected, highlighted by channel with the memory's phrases marked. Below each
arm's steps, what the gateway's log says reached the model (hook blocks and memory-tool results), the independent
witness grading checks delivery against. Plain HTML and CSS, no script: the page opens from disk. On a narrow
screen the arms stack.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from ..analysis import Admission, AdmissionDecision, ArmResult
from ..grading.gateway_view import ReceivedContext
from ..harness.transcript import Step, StepSource, Transcript
from .style import BASE_STYLE

__all__ = ["INJECTED_COLOUR", "ArmView", "attempt_page"]

INJECTED_COLOUR = "#ffd21f"  # the injected block's background: what the screenshot test looks for
RECEIVED_COLOUR = "#cfe8ff"
_SHOWN = 4000  # characters of one step's text; a tool result can be a whole file

_STYLE = (
    BASE_STYLE
    + f"""
body{{max-width:none}}
.arms{{display:grid;grid-template-columns:repeat(var(--arms),minmax(0,1fr));gap:12px;align-items:start}}
@media (max-width:900px){{.arms{{grid-template-columns:minmax(0,1fr)}}}}
.arm h2{{font-size:16px;margin:4px 0}}.arm dl{{font-size:13px;margin:4px 0 8px}}.arm dt{{font-weight:bold}}
.arm dd{{margin:0 0 4px 0}}
.step{{border:1px solid var(--line);border-radius:4px;padding:6px;margin:6px 0;font-size:13px;overflow-wrap:anywhere}}
.step .who{{font-weight:bold;font-size:12px;color:var(--muted);text-transform:uppercase}}
.step pre{{white-space:pre-wrap;margin:4px 0;font-size:12px}}
.user{{background:var(--soft)}}.tool{{background:var(--soft)}}
.injected{{background:{INJECTED_COLOUR};border-color:#b38f00;color:#000}}.injected .who{{color:#333}}
.received{{background:{RECEIVED_COLOUR};border-color:#6a9ccc;color:#000}}.received .who{{color:#333}}
mark{{background:#ff7a00;color:#000}}
"""
)


@dataclass(frozen=True)
class ArmView:
    """One column: the arm's condition, what it came to, its admission(s), its normalised transcript and what the
    gateway says the model received."""

    condition: str
    result: ArmResult
    admissions: tuple[tuple[str, AdmissionDecision], ...]  # (memory system, decision) of each pair the arm is in
    transcript: Transcript
    received: tuple[ReceivedContext, ...]


def _marked(text: str, phrases: Sequence[str]) -> str:
    shown = text if len(text) <= _SHOWN else text[:_SHOWN] + "\n[... cut for display]"
    if not phrases:
        return escape(shown)
    pattern = re.compile("|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True)), re.I)
    parts, last = [], 0
    for match in pattern.finditer(shown):
        parts += [escape(shown[last : match.start()]), f"<mark>{escape(match.group(0))}</mark>"]
        last = match.end()
    return "".join([*parts, escape(shown[last:])])


def _step(step: Step, phrases: Sequence[str]) -> str:
    who = step.source.value if step.channel is None else f"injected · {step.channel.value}"
    body = [f"<pre>{_marked(step.text, phrases)}</pre>"] if step.text else []
    body += [f"<pre>&#8594; {escape(call.name)} {_marked(str(call.input), phrases)}</pre>" for call in step.tool_calls]
    body += [f"<pre>&#8592; {_marked(result.text, phrases)}</pre>" for result in step.tool_results]
    channel = f' data-channel="{step.channel.value}"' if step.channel else ""
    return f'<div class="step {step.source.value}"{channel}><div class="who">{who}</div>{"".join(body)}</div>'


def _received(context: ReceivedContext, phrases: Sequence[str]) -> str:
    return (
        f'<div class="step received" data-channel="{context.channel.value}"><div class="who">reached the model in '
        f"request {context.sequence} · {escape(context.channel.value)} ({escape(context.hook)})</div>"
        f"<pre>{_marked(context.text, phrases)}</pre></div>"
    )


def _admission(admissions: Sequence[tuple[str, AdmissionDecision]]) -> str:
    if not admissions:
        return "not decided (no admission was given to this page)"
    shown = [
        f"{escape(system)}: {decision.decision.value}"
        + ("" if decision.decision is Admission.ADMITTED else f" ({escape(decision.reason.value)})")
        for system, decision in admissions
    ]
    return "; ".join(shown)


def _outcome(arm: ArmView) -> str:
    """What the arm came to, before its steps: outcome, ending, delivery by channel, use, admission."""
    result = arm.result
    ending = result.ending.value + (f": {escape(result.ending_note)}" if result.ending_note else "")
    delivered = ", ".join(escape(channel) for channel in result.delivered_via) if result.delivered else "nothing"
    facts = [
        ("outcome", f"<strong>{result.outcome.value}</strong> ({ending})"),
        ("memory reached the model through", delivered),
        ("the agent used it", "yes" if result.used else "no"),
        ("admission", _admission(arm.admissions)),
    ]
    return "<dl>" + "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in facts) + "</dl>"


def _column(arm: ArmView, phrases: Sequence[str]) -> str:
    steps = "".join(_step(step, phrases) for step in arm.transcript.steps if step.source is not StepSource.SYSTEM)
    injected = len(arm.transcript.by_source(StepSource.INJECTED))
    received = "".join(_received(context, phrases) for context in arm.received) or '<p class="note">nothing</p>'
    return (
        f'<section class="arm" data-condition="{escape(arm.condition)}" aria-label="{escape(arm.condition)} arm">'
        f"<h2>{escape(arm.condition)}</h2>{_outcome(arm)}"
        f'<p class="note">{len(arm.transcript.steps)} steps, {injected} injected</p>{steps}'
        f"<h3>The gateway's record of injected context that reached the model</h3>{received}</section>"
    )


def attempt_page(challenge: str, attempt: int, arms: Sequence[ArmView], phrases: Sequence[str]) -> str:
    """The page of one attempt: ``arms`` in column order (the control first)."""
    title = f"{escape(challenge)}, attempt {attempt}"
    columns = "".join(_column(arm, phrases) for arm in arms)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{_STYLE}</style></head><body>"
        f'<header><h1>{title}</h1><nav aria-label="report"><a href="../index.html">back to the report</a></nav>'
        '<p class="note">Each arm: what it came to, then its steps; injected context is highlighted with its channel '
        "and memory phrases are marked.</p></header>"
        f'<main><div class="arms" style="--arms:{len(arms)}">{columns}</div></main></body></html>\n'
    )
