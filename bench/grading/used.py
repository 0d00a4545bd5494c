"""Layer two, used: did the agent act on something only the delivered memory said.

Definition. A marker (an anchored path or an identifier the challenge declares) is *used* when all hold:
  1. a delivering step (an injected step, or a result of the memory system's own tool) contains the marker: the
     memory said it (its first such step is the delivery);
  2. a later agent step makes a tool call whose input contains the marker in some string value
     (opening the anchored file, passing the identifier to a command): acting, not talking;
  3. no user step or other tool result before that call contained the marker: the agent had no other source.
Rule 3 is deliberately conservative: an agent that saw the file listed by ``ls`` and then also got the memory
is not counted as using it, so "used" can under-count but never credits the memory with what the workspace
already showed. Agent text that merely mentions a marker is never use.
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import JsonValue

from ..contracts import ContractModel
from .delivered import DeliveringStep, delivering_steps, memory_tool_call_ids
from .memory import MemoryDeclaration
from .transcript import Channel, Step, StepSource, Transcript

__all__ = ["UseEvidence", "UseGrade", "grade_use"]


class UseEvidence(ContractModel):
    marker: str
    channel: Channel  # the channel of the delivering step
    delivered_at: int  # step index of the delivery
    used_at: int  # step index of the acting tool call
    tool: str


class UseGrade(ContractModel):
    evidence: tuple[UseEvidence, ...]  # one per used marker
    unattributable: tuple[str, ...]  # markers delivered and acted on, but seen elsewhere before the act

    @property
    def used(self) -> bool:
        return bool(self.evidence)


def _strings(value: JsonValue) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def _seen_elsewhere(step: Step, marker: str, memory_calls: frozenset[str]) -> bool:
    if step.source is StepSource.USER:
        return marker in step.text
    return step.source is StepSource.TOOL and any(
        marker in result.text for result in step.tool_results if result.tool_use_id not in memory_calls
    )


def _use_of(
    transcript: Transcript, marker: str, delivering: tuple[DeliveringStep, ...], memory_calls: frozenset[str]
) -> UseEvidence | str | None:
    """Evidence of use; the marker itself when it was acted on but seen elsewhere first; None when never acted on."""
    delivery = next((step for step in delivering if marker in step.text), None)
    if delivery is None:
        return None
    seen_elsewhere = False
    for step in transcript.steps:
        if step.index > delivery.index and step.source is StepSource.AGENT:
            for call in step.tool_calls:
                if any(marker in text for text in _strings(call.input)):
                    if seen_elsewhere:
                        return marker
                    return UseEvidence(
                        marker=marker,
                        channel=delivery.channel,
                        delivered_at=delivery.index,
                        used_at=step.index,
                        tool=call.name,
                    )
        seen_elsewhere = seen_elsewhere or _seen_elsewhere(step, marker, memory_calls)
    return None


def grade_use(transcript: Transcript, memory: MemoryDeclaration) -> UseGrade:
    evidence: list[UseEvidence] = []
    unattributable: list[str] = []
    delivering = delivering_steps(transcript, memory)
    memory_calls = memory_tool_call_ids(transcript, memory)
    for marker in memory.markers:
        found = _use_of(transcript, marker, delivering, memory_calls)
        if isinstance(found, UseEvidence):
            evidence.append(found)
        elif found is not None:
            unattributable.append(found)
    return UseGrade(evidence=tuple(evidence), unattributable=tuple(unattributable))
