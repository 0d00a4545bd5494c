"""What an API dialect does for the gateway: the one place a wire format is known.

The gateway's routes, policy engine, meter and recorder speak the neutral model (:mod:`..neutral`); a dialect
translates at the edges. It reads a request body into a :class:`~bench.gateway.neutral.Conversation`, renders a
policy's :class:`~bench.gateway.neutral.NeutralReply` as its wire answer (a whole body, or server-sent events),
reads the usage a provider's answer reports (forward mode), tells a complete stream from a cut one, and writes its
API's error bodies. A dialect never raises on what a client or a provider sends: an unreadable request is
:class:`UnreadableRequest` (the gateway answers it 400), an unreadable answer has no usage (charged its bound).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ...contracts.api_dialect import ApiDialect
from ..conversation import MessageChain
from ..errors import UnreadableRequest
from ..metering import TokenUsage
from ..neutral import Conversation, HarnessHooks, Message, NeutralReply, reply_seed
from ..policy import Policy
from ..stream import StreamEvent

__all__ = ["Dialect", "ErrorKind", "Rejection", "UnreadableRequest", "estimate_tokens"]


class ErrorKind(StrEnum):
    """Why the gateway answers a request itself; each dialect writes it in its API's words."""

    AUTHENTICATION = "authentication"  # 401
    NOT_FOUND = "not-found"  # 404
    TOO_LARGE = "too-large"  # 413
    INVALID_REQUEST = "invalid-request"  # 400
    SERVER = "server"  # 500, 502


@dataclass(frozen=True)
class Rejection:
    """A request the dialect's API refuses before reading it (a missing header or a field it requires)."""

    missing_version: bool  # the API's version header is missing
    message: str


def estimate_tokens(value: Any) -> int:
    """A deterministic stand-in count for policy mode (about four characters a token)."""
    return len(json.dumps(value, separators=(",", ":"))) // 4 + 1


class Dialect(ABC):
    """One API dialect. Stateless: one instance serves every request."""

    name: ApiDialect
    model_path: str  # the route answered by the model, e.g. ``/v1/messages``
    count_path: str | None  # a free route counting a request's tokens, when the API has one
    output_field: str  # the request field bounding its output (its cost's upper bound needs it)
    ending_events: frozenset[str]  # stream events after which a stream has said all it will
    passed_back_prefixes: tuple[str, ...]  # provider headers a client acts on (rate limits), passed back

    @abstractmethod
    def reject(self, route: str, headers: Mapping[str, str], body: Any) -> Rejection | None:
        """Why the API refuses this request outright (policy and forward mode alike); None when it does not.
        ``headers`` have lower-case names.
        ``body`` is the parsed JSON, whatever it is (a body that is not an object is refused after this)."""

    @abstractmethod
    def parse(self, body: dict[str, Any]) -> Conversation:
        """The conversation of a request body; :class:`UnreadableRequest` when it cannot be read as one."""

    @abstractmethod
    def reply(self, answer: Any) -> Message | None:
        """The model's answer in a whole answer body (a :meth:`render` result, or a provider's), as the assistant
        message a next request repeats; None when the body is no answer of the model (an error body) or cannot be
        read as one."""

    @abstractmethod
    def output_bound(self, body: dict[str, Any]) -> int | None:
        """The request's bound on output tokens; None when it names none."""

    def streams(self, body: dict[str, Any]) -> bool:
        return body.get("stream") is True

    @abstractmethod
    def render(self, reply: NeutralReply, body: dict[str, Any]) -> tuple[dict[str, Any], TokenUsage]:
        """The whole answer carrying ``reply`` to request ``body``, with a stand-in usage, and that usage."""

    @abstractmethod
    def events(self, answer: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        """The server-sent events that stream ``answer`` (a :meth:`render` result)."""

    @abstractmethod
    def assemble(self, events: Iterable[StreamEvent]) -> dict[str, Any]:
        """The whole answer a stream described, as a client rebuilds it; an out-of-shape event changes nothing."""

    @abstractmethod
    def finished(self, events: Iterable[StreamEvent]) -> bool:
        """Whether a stream ran to its documented, successful end."""

    @abstractmethod
    def stream_usage(self, events: list[StreamEvent]) -> TokenUsage | None:
        """A finished stream's usage; None when it did not finish or its usage is missing or malformed."""

    @abstractmethod
    def answer_usage(self, answer: object) -> TokenUsage | None:
        """A whole answer's usage; None when missing or malformed."""

    @abstractmethod
    def error_body(self, kind: ErrorKind, message: str) -> dict[str, Any]:
        """The body the API sends with an error status, which clients show to the user verbatim."""

    @abstractmethod
    def key_message(self, presented: bool) -> str:
        """The 401 message for a request without a key any arm holds (``presented``: it sent one)."""

    @abstractmethod
    def chain(self, request: dict[str, Any], answer: Any) -> MessageChain | None:
        """The digests chaining this exchange into its conversation; None when the dialect keeps none."""

    @abstractmethod
    def tool_schemas(self, body: dict[str, Any]) -> dict[str, Any]:
        """The JSON schema of each tool the request defines with one, by qualified name."""

    def answer(
        self, policy: Policy, body: dict[str, Any], hooks: HarnessHooks | None = None
    ) -> tuple[str, dict[str, Any], TokenUsage]:
        """The rule of ``policy`` that answers request ``body``, its whole answer on this wire, and its stand-in
        usage; the harness's ``hooks`` name the reply's tool calls first. :class:`UnreadableRequest` when
        the body cannot be read as a conversation."""
        conversation = self.parse(body)
        rule, reply = policy.reply(conversation, reply_seed(body), hooks.offered_tools if hooks is not None else None)
        if hooks is not None:
            reply = NeutralReply.model_validate(hooks.name_calls(reply, conversation))
        message, usage = self.render(reply, body)
        return rule, message, usage

    def count_tokens(self, body: dict[str, Any]) -> dict[str, Any]:
        """The answer of :attr:`count_path` in policy mode."""
        return {"input_tokens": estimate_tokens(body)}
