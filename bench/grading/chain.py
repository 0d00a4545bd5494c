"""The harness's own conversation in a gateway log, chained from the runner's prompts: what counts as delivered.

The agent holds the gateway key in its environment and owns its session file, which the harness rebuilds history
from at a resume. So the conversation is read from the gateway's requests alone, starting from the runner's own
record of the arm (:class:`RunnerRecord`: the prompts it sent, in order, when each step ran, and the harness it
ran). Each request and answer is read in the gateway's neutral conversation, through the API dialect its exchange
record names (:mod:`bench.gateway.recorded`), so one set of rules chains every harness's requests (one message per
turn side: a Responses request's items are grouped as the neutral model says):

- the conversation starts with a request of one message carrying the runner's first prompt (its one text that is
  neither the harness's own format nor an instruction the harness placed among the turns is the prompt);
- each later request of the conversation repeats every message so far (the model's own answers as the harness
  repeats them: :mod:`.repeats`) and adds one user message: after an answer that called tools, exactly the results
  of those calls; after an answer that ended the turn, the runner's next prompt (a continuity challenge's
  follow-up), or, once a sub-agent was started, a harness notice of reminders alone. A retry after an answer that
  carried nothing repeats the last request;
- a request continuing an earlier point a second time is a *fork*, which the harness never makes;
- a sub-agent's conversation starts from the prompt the model gave the harness's agent tool: it is the harness's
  (its text counts as received), never the memory's channel;
- everything else is a tamper finding (:class:`~.findings.TamperFinding`) naming the exchange and the message:
  a request no conversation of the arm explains (one in a dialect the arm's harness does not speak, or one its
  dialect cannot read, included), a user turn the runner did not send (any after the last prompt's answer
  included), a request while no step ran (the runner's clock, not the agent's), a message repeated otherwise than
  it was first carried. Such a request never adds to what counts as delivered.

The conversation's *history* is each message as first carried: user messages as the gateway received them, and
the assistant's as the model answered them (the response read by its dialect, never the harness's repetition of
it; an answer holding anything but the model's own items is none, so a provider cannot place the harness's
context).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ..gateway.exchange import ExchangeRecord
from ..gateway.neutral import Conversation as Request
from ..gateway.neutral import Message, Role, TextPart, ToolCallPart, ToolResultPart
from ..gateway.recorded import UnreadableRequest, answer_message, is_model_request, request_conversation
from ..harness import DEFAULT_HARNESS, Harness, harness_named
from .findings import TamperFinding, TamperKind
from .repeats import harness_written, same_message

__all__ = [
    "Conversation",
    "HistoryMessage",
    "RunnerRecord",
    "harness_conversation",
    "message_texts",
    "model_requests",
    "prose_texts",
]


@dataclass(frozen=True)
class RunnerRecord:
    """What the runner itself knows of an arm: the prompts it sent, in order, the working directory it ran the
    harness in, and each step's start and end by its own clock (None only when reading a captured session)."""

    prompts: tuple[str, ...]
    cwd: str
    windows: tuple[tuple[datetime, datetime], ...] | None = None
    harness: str = DEFAULT_HARNESS  # the harness the arm ran (its registered name)

    def running(self, at: datetime) -> bool:
        return self.windows is None or any(start <= at <= end for start, end in self.windows)


def message_texts(message: Message) -> list[str]:
    """The text parts of a message, as sent."""
    return [part.text for part in message.parts if isinstance(part, TextPart)]


def prose_texts(message: Message, harness: Harness) -> list[str]:
    """A user message's text parts that are not the harness's own: what a user (or a prompt) wrote."""
    return [
        part.text.strip() for part in message.parts if isinstance(part, TextPart) and not harness_written(part, harness)
    ]


def _calls(message: Message) -> list[ToolCallPart]:
    return [part for part in message.parts if isinstance(part, ToolCallPart)]


@dataclass(frozen=True)
class HistoryMessage:
    index: int
    sequence: int  # the exchange that first carried it (a user message) or answered it (an assistant message)
    message: Message


@dataclass
class Conversation:
    """The harness's requests of one arm, the history they carried, its sub-agents' requests and the findings.
    ``requests`` holds what each member's and sub-agent's request showed the model, by the exchange's sequence."""

    cwd: str
    harness: Harness
    members: list[ExchangeRecord] = field(default_factory=list)
    history: list[HistoryMessage] = field(default_factory=list)
    side: list[ExchangeRecord] = field(default_factory=list)  # sub-agents' requests: the harness's, not the memory's
    findings: list[TamperFinding] = field(default_factory=list)
    requests: dict[int, Request] = field(default_factory=dict)

    @property
    def sequences(self) -> tuple[int, ...]:
        return tuple(member.sequence for member in self.members)

    def request(self, exchange: ExchangeRecord) -> Request:
        """What ``exchange`` (a member's or a sub-agent's request) showed the model."""
        return self.requests[exchange.sequence]


@dataclass
class _Reader:
    runner: RunnerRecord
    conversation: Conversation
    step: int = 0  # the prompt the conversation is on
    agent_prompts: set[str] = field(default_factory=set)  # prompts the model gave the harness's agent tool
    side_roots: list[Message] = field(default_factory=list)

    @property
    def history(self) -> list[HistoryMessage]:
        return self.conversation.history

    def find(self, kind: TamperKind, exchange: ExchangeRecord, message: int | None, detail: str) -> None:
        self.conversation.findings.append(
            TamperFinding(kind=kind, exchange=exchange.sequence, message=message, detail=detail[:400])
        )

    def same(self, first: Message, repeated: Message) -> bool:
        return same_message(first, repeated, self.runner.cwd, self.conversation.harness)

    def carries_prompt(self, message: Message, step: int) -> bool:
        if step >= len(self.runner.prompts) or message.role is not Role.USER:
            return False
        prose = prose_texts(message, self.conversation.harness)
        return prose == [self.runner.prompts[step].strip()] and not _results(message)

    def read(self, exchange: ExchangeRecord) -> None:
        try:
            request = request_conversation(exchange)
        except UnreadableRequest as unreadable:
            self.find(TamperKind.FOREIGN_REQUEST, exchange, None, f"a request its dialect cannot read: {unreadable}")
            return
        self.conversation.requests[exchange.sequence] = request
        messages = request.messages
        if not self.runner.running(datetime.fromisoformat(exchange.started_at)):
            self.find(
                TamperKind.OUTSIDE_STEPS,
                exchange,
                len(messages) - 1 if messages else None,
                f"a request arrived at {exchange.started_at}, while no step of the arm was running",
            )
        elif not self.conversation.members:
            self._start(exchange, messages)
        elif messages and self.same(self.history[0].message, messages[0]):
            self._continue(exchange, messages)
        elif messages and self._side(messages[0]):
            self.conversation.side.append(exchange)
        else:
            self.find(
                TamperKind.FOREIGN_REQUEST,
                exchange,
                0 if messages else None,
                "a messages request that starts no conversation the runner or the harness began",
            )

    def _side(self, first: Message) -> bool:
        """A sub-agent's request: its first message is a prompt the model gave the agent tool (or its root's)."""
        if any(self.same(root, first) for root in self.side_roots):
            return True
        prose = prose_texts(first, self.conversation.harness) if first.role is Role.USER else []
        if len(prose) == 1 and prose[0] in self.agent_prompts and not _results(first):
            self.side_roots.append(first)
            return True
        return False

    def _start(self, exchange: ExchangeRecord, messages: Sequence[Message]) -> None:
        if len(messages) == 1 and self.carries_prompt(messages[0], 0):
            self._accept(exchange, messages[0])
        else:
            self.find(
                TamperKind.FOREIGN_REQUEST,
                exchange,
                0 if messages else None,
                "the first request does not carry the runner's first prompt alone",
            )

    def _continue(self, exchange: ExchangeRecord, messages: Sequence[Message]) -> None:
        known, new = len(self.history), len(messages) - 1
        differs = [i for i in range(min(new, known)) if not self.same(self.history[i].message, messages[i])]
        if new < known:
            retry = new == known - 1 and self.history[-1].message.role is Role.USER
            if retry and not differs and self.same(self.history[-1].message, messages[-1]):
                self._accept(exchange, None)  # the harness retrying a request that got no answer
            else:
                self.find(
                    TamperKind.FORK,
                    exchange,
                    new,
                    f"continues message {new - 1} of the conversation again, "
                    f"which already goes on to message {known - 1}",
                )
            return
        for index in differs:
            self.find(TamperKind.REWRITTEN, exchange, index, "repeats the message otherwise than it was carried")
        if new > known:
            self.find(
                TamperKind.REWRITTEN,
                exchange,
                known,
                f"carries {new - known} message(s) before its new one that the conversation never carried",
            )
        self._turn(exchange, messages[-1], len(messages) - 1)

    def _turn(self, exchange: ExchangeRecord, message: Message, index: int) -> None:
        """The request's new user message, after the history's last message."""
        last = self.history[-1].message
        answered = last.role is Role.ASSISTANT
        calls = {call.id for call in _calls(last)} if answered else set()
        if calls and _results(message) == calls and not prose_texts(message, self.conversation.harness):
            self._accept(exchange, message)
        elif answered and not calls and self.carries_prompt(message, self.step + 1):
            self.step += 1
            self._accept(exchange, message)
        elif answered and not calls and self.agent_prompts and _notice(message, self.conversation.harness):
            self._accept(exchange, message)  # a harness notice about a sub-agent it runs in the background
        else:
            after = self.step + 1 >= len(self.runner.prompts) and answered and not calls
            self.find(
                TamperKind.UNSENT_TURN,
                exchange,
                index,
                "a user turn the runner did not send" + (" after the arm's last answer" if after else ""),
            )

    def _accept(self, exchange: ExchangeRecord, message: Message | None) -> None:
        self.conversation.members.append(exchange)
        if message is not None:
            self.history.append(HistoryMessage(len(self.history), exchange.sequence, message))
        answer = answer_message(exchange)
        if answer is not None:
            self.history.append(HistoryMessage(len(self.history), exchange.sequence, answer))
            self.agent_prompts.update(
                str(call.arguments["prompt"]).strip()
                for call in _calls(answer)
                if call.qualified_name in self.conversation.harness.subagent_tools
                and isinstance(call.arguments, dict)
                and "prompt" in call.arguments
            )


def _results(message: Message) -> set[str]:
    return {part.id for part in message.parts if isinstance(part, ToolResultPart)}


def _notice(message: Message, harness: Harness) -> bool:
    """A user message of harness reminders alone (what the harness sends when a background sub-agent reports)."""
    texts = message_texts(message)
    return bool(texts) and not prose_texts(message, harness) and not _results(message)


def harness_conversation(exchanges: Iterable[ExchangeRecord], runner: RunnerRecord) -> Conversation:
    """The harness's conversation among ``exchanges``, chained from the runner's own record of the arm. Each
    exchange is read through the dialect the gateway recorded it in; a request to the model in a dialect the
    arm's harness does not speak is no request of its conversation."""
    harness = harness_named(runner.harness)
    reader = _Reader(runner, Conversation(cwd=runner.cwd, harness=harness))
    for exchange in sorted(exchanges, key=lambda e: e.sequence):
        if is_model_request(exchange, harness.dialect):
            reader.read(exchange)
        elif is_model_request(exchange, exchange.dialect):
            detail = f"a request in the {exchange.dialect} dialect, which the arm's harness does not speak"
            reader.find(TamperKind.FOREIGN_REQUEST, exchange, None, detail)
    return reader.conversation


def model_requests(conversation: Conversation) -> Sequence[ExchangeRecord]:
    """Every request whose content reached a model of the arm by the harness's doing: members and sub-agents'."""
    return [*conversation.members, *conversation.side]
