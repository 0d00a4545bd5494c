"""The transcript viewer: one static page per attempt, every arm side by side, step by step.

Each column is one arm (the shared control first, then each memory system's treatment): the prompts, the
assistant's text, tool calls and their results, and the context a hook injected, highlighted by channel with
the memory's phrases marked. Below each arm's steps, what the gateway's log says reached the model (hook blocks
and memory-tool results), the independent witness grading checks delivery against. Plain HTML and CSS, no
script: the page opens from disk.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from ..grading.gateway_view import ReceivedContext
from ..grading.transcript import Step, StepSource, Transcript

__all__ = ["INJECTED_COLOUR", "ArmView", "attempt_page"]

INJECTED_COLOUR = "#ffd21f"  # the injected block's background: what the screenshot test looks for
RECEIVED_COLOUR = "#cfe8ff"
_SHOWN = 4000  # characters of one step's text; a tool result can be a whole file

_STYLE = f"""
body{{font-family:sans-serif;margin:16px;color:#222;background:#fff}}
h1{{font-size:20px}}.note{{font-size:12px;color:#555}}
.arms{{display:grid;grid-template-columns:repeat(var(--arms),minmax(0,1fr));gap:12px;align-items:start}}
.arm h2{{font-size:16px;margin:4px 0}}
.step{{border:1px solid #ddd;border-radius:4px;padding:6px;margin:6px 0;font-size:12px;overflow-wrap:anywhere}}
.step .who{{font-weight:bold;font-size:11px;color:#555;text-transform:uppercase}}
.step pre{{white-space:pre-wrap;margin:4px 0;font-size:11px}}
.user{{background:#f4f4f4}}.agent{{background:#fff}}.tool{{background:#fafafa;color:#444}}.system{{color:#777}}
.injected{{background:{INJECTED_COLOUR};border-color:#b38f00}}
.received{{background:{RECEIVED_COLOUR};border-color:#6a9ccc}}
mark{{background:#ff7a00;color:#000}}
"""


@dataclass(frozen=True)
class ArmView:
    """One column: the arm's condition, its normalised transcript and what the gateway says the model received."""

    condition: str
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


def _column(arm: ArmView, phrases: Sequence[str]) -> str:
    steps = "".join(_step(step, phrases) for step in arm.transcript.steps if step.source is not StepSource.SYSTEM)
    injected = len(arm.transcript.by_source(StepSource.INJECTED))
    received = "".join(_received(context, phrases) for context in arm.received) or '<p class="note">nothing</p>'
    return (
        f'<section class="arm" data-condition="{escape(arm.condition)}"><h2>{escape(arm.condition)}</h2>'
        f'<p class="note">{len(arm.transcript.steps)} steps, {injected} injected</p>{steps}'
        f"<h3>The gateway's record of injected context that reached the model</h3>{received}</section>"
    )


def attempt_page(challenge: str, attempt: int, arms: Sequence[ArmView], phrases: Sequence[str]) -> str:
    """The page of one attempt: ``arms`` in column order (the control first)."""
    title = f"{escape(challenge)}, attempt {attempt}"
    columns = "".join(_column(arm, phrases) for arm in arms)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f'<style>{_STYLE}</style></head><body><h1>{title}</h1><p class="note"><a href="../index.html">report</a> '
        "&middot; injected context is highlighted with its channel; memory phrases are marked</p>"
        f'<div class="arms" style="--arms:{len(arms)}">{columns}</div></body></html>\n'
    )
