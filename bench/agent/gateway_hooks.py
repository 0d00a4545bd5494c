"""The arm's harness as its gateway's :class:`~bench.gateway.neutral.HarnessHooks`: the policy's tool calls as the
harness's client runs them, the tools its requests offer in the policy's terms, and which requests are compactions.

The harness layer knows its client but not the gateway's model; this adapter joins the two, so neither imports the
other. Only a harness whose client's tools are not the policy's gets one (:attr:`~bench.harness.Harness.adapts_policy`):
without hooks the gateway records every exchange exactly as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..gateway.neutral import Conversation, HarnessHooks, NeutralReply, RequestKind, ToolCallPart
from ..harness import Harness

__all__ = ["HarnessAdapter", "gateway_hooks"]


class HarnessAdapter:
    def __init__(self, harness: Harness) -> None:
        self._harness = harness

    def name_calls(self, reply: NeutralReply, conversation: Conversation) -> NeutralReply:
        parts = tuple(self._call(part) if isinstance(part, ToolCallPart) else part for part in reply.parts)
        return reply.model_copy(update={"parts": parts})

    def _call(self, part: ToolCallPart) -> ToolCallPart:
        call = self._harness.client_call(part.qualified_name, part.arguments)
        return part.model_copy(update={"name": call.name, "namespace": call.namespace, "arguments": call.arguments})

    def offered_tools(self, conversation: Conversation) -> frozenset[str]:
        return self._harness.offered_tools(conversation.tools, conversation.system)

    def request_kind(self, headers: Mapping[str, str], body: dict[str, Any]) -> RequestKind:
        return RequestKind.COMPACTION if self._harness.is_compaction(headers) else RequestKind.TURN


def gateway_hooks(harness: Harness) -> HarnessHooks | None:
    """The hooks the arm's gateway is given: None when the policy's tool names are the harness's client's own."""
    return HarnessAdapter(harness) if harness.adapts_policy else None
