"""The harness's own conversation in a gateway log, chained from the runner's prompts: what counts as delivered.

The agent holds the gateway key in its environment and owns its session file, which the harness rebuilds history
from at a resume. So the conversation is read from the gateway's requests alone, starting from the runner's own
record of the arm (:class:`RunnerRecord`: the prompts it sent, in order, and when each step ran):

- the conversation starts with a request of one message carrying the runner's first prompt (its one text block
  that is not a harness reminder is the prompt);
- each later request of the conversation repeats every message so far (the model's own answers as the harness
  repeats them: :mod:`.repeats`) and adds one user message: after an answer that called tools, exactly the results
  of those calls; after an answer that ended the turn, the runner's next prompt (a continuity challenge's
  follow-up), or, once a sub-agent was started, a harness notice of reminders alone. A retry after an answer that
  carried nothing repeats the last request;
- a request continuing an earlier point a second time is a *fork*, which the harness never makes;
- a sub-agent's conversation starts from the prompt the model gave the harness's agent tool: it is the harness's
  (its text counts as received), never the memory's channel;
- everything else is a tamper finding (:class:`~.findings.TamperFinding`) naming the exchange and the message:
  a request no conversation of the arm explains, a user turn the runner did not send (any after the last prompt's
  answer included), a request while no step ran (the runner's clock, not the agent's), a message repeated
  otherwise than it was first carried. Such a request never adds to what counts as delivered.

The conversation's *history* is each message as first carried: user messages as the gateway received them, and
the assistant's as the model answered them (the response, never the harness's repetition of it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..gateway.exchange import ExchangeRecord
from ..harness import DEFAULT_HARNESS, Harness, harness_named
from .findings import TamperFinding, TamperKind
from .repeats import same_message

__all__ = [
    "Conversation",
    "HistoryMessage",
    "RunnerRecord",
    "harness_conversation",
    "is_messages_request",
    "message_blocks",
    "message_texts",
    "model_requests",
    "prose_texts",
    "request_messages",
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


def is_messages_request(exchange: ExchangeRecord) -> bool:
    route = exchange.path.split("?", 1)[0]
    return exchange.method == "POST" and route == "/v1/messages" and isinstance(exchange.request_body, dict)


def request_messages(exchange: ExchangeRecord) -> list[Any]:
    """The messages of an exchange's request (none when it has no list of them)."""
    body = exchange.request_body
    messages = body.get("messages") if isinstance(body, dict) else None
    return messages if isinstance(messages, list) else []


def message_blocks(message: Any) -> list[dict[str, Any]]:
    """A message's content blocks; a bare string content is one text block."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def message_texts(message: Any) -> list[str]:
    """The text blocks of a message (a bare string content is one block)."""
    return [
        str(b["text"]) for b in message_blocks(message) if b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


def prose_texts(message: Any, harness: Harness) -> list[str]:
    """A user message's text blocks that are not the harness's own: what a user (or a prompt) wrote."""
    return [text.strip() for text in message_texts(message) if not harness.injection.is_harness_text(text)]


def _reply(exchange: ExchangeRecord) -> list[Any] | None:
    body = exchange.response_body
    content = body.get("content") if isinstance(body, dict) and body.get("type") == "message" else None
    return content if isinstance(content, list) else None


def _calls(message: Any) -> list[dict[str, Any]]:
    return [b for b in message_blocks(message) if b.get("type") == "tool_use"]


@dataclass(frozen=True)
class HistoryMessage:
    index: int
    sequence: int  # the exchange that first carried it (a user message) or answered it (an assistant message)
    message: dict[str, Any]


@dataclass
class Conversation:
    """The harness's requests of one arm, the history they carried, its sub-agents' requests and the findings."""

    cwd: str
    harness: Harness
    members: list[ExchangeRecord] = field(default_factory=list)
    history: list[HistoryMessage] = field(default_factory=list)
    side: list[ExchangeRecord] = field(default_factory=list)  # sub-agents' requests: the harness's, not the memory's
    findings: list[TamperFinding] = field(default_factory=list)

    @property
    def sequences(self) -> tuple[int, ...]:
        return tuple(member.sequence for member in self.members)


@dataclass
class _Reader:
    runner: RunnerRecord
    conversation: Conversation
    step: int = 0  # the prompt the conversation is on
    agent_prompts: set[str] = field(default_factory=set)  # prompts the model gave the harness's agent tool
    side_roots: list[Any] = field(default_factory=list)

    @property
    def history(self) -> list[HistoryMessage]:
        return self.conversation.history

    def find(self, kind: TamperKind, exchange: ExchangeRecord, message: int | None, detail: str) -> None:
        self.conversation.findings.append(
            TamperFinding(kind=kind, exchange=exchange.sequence, message=message, detail=detail[:400])
        )

    def carries_prompt(self, message: Any, step: int) -> bool:
        if step >= len(self.runner.prompts) or not isinstance(message, dict) or message.get("role") != "user":
            return False
        prose = prose_texts(message, self.conversation.harness)
        return prose == [self.runner.prompts[step].strip()] and not _results(message)

    def read(self, exchange: ExchangeRecord) -> None:
        messages = request_messages(exchange)
        if not self.runner.running(datetime.fromisoformat(exchange.started_at)):
            self.find(
                TamperKind.OUTSIDE_STEPS,
                exchange,
                len(messages) - 1 if messages else None,
                f"a request arrived at {exchange.started_at}, while no step of the arm was running",
            )
        elif not self.conversation.members:
            self._start(exchange, messages)
        elif messages and same_message(
            self.history[0].message, messages[0], self.runner.cwd, self.conversation.harness
        ):
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

    def _side(self, first: Any) -> bool:
        """A sub-agent's request: its first message is a prompt the model gave the agent tool (or its root's)."""
        if any(same_message(root, first, self.runner.cwd, self.conversation.harness) for root in self.side_roots):
            return True
        prose = (
            prose_texts(first, self.conversation.harness)
            if isinstance(first, dict) and first.get("role") == "user"
            else []
        )
        if len(prose) == 1 and prose[0] in self.agent_prompts and not _results(first):
            self.side_roots.append(first)
            return True
        return False

    def _start(self, exchange: ExchangeRecord, messages: list[Any]) -> None:
        if len(messages) == 1 and self.carries_prompt(messages[0], 0):
            self._accept(exchange, messages[0])
        else:
            self.find(
                TamperKind.FOREIGN_REQUEST,
                exchange,
                0 if messages else None,
                "the first request does not carry the runner's first prompt alone",
            )

    def _continue(self, exchange: ExchangeRecord, messages: list[Any]) -> None:
        known, new = len(self.history), len(messages) - 1
        cwd, harness = self.runner.cwd, self.conversation.harness
        differs = [
            i for i in range(min(new, known)) if not same_message(self.history[i].message, messages[i], cwd, harness)
        ]
        if new < known:
            retry = new == known - 1 and self.history[-1].message.get("role") == "user"
            if retry and not differs and same_message(self.history[-1].message, messages[-1], cwd, harness):
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

    def _turn(self, exchange: ExchangeRecord, message: Any, index: int) -> None:
        """The request's new user message, after the history's last message."""
        last = self.history[-1].message
        calls = {str(call.get("id")) for call in _calls(last)} if last.get("role") == "assistant" else set()
        if calls and _results(message) == calls and not prose_texts(message, self.conversation.harness):
            self._accept(exchange, message)
        elif last.get("role") == "assistant" and not calls and self.carries_prompt(message, self.step + 1):
            self.step += 1
            self._accept(exchange, message)
        elif (
            last.get("role") == "assistant"
            and not calls
            and self.agent_prompts
            and _notice(message, self.conversation.harness)
        ):
            self._accept(exchange, message)  # a harness notice about a sub-agent it runs in the background
        else:
            after = self.step + 1 >= len(self.runner.prompts) and last.get("role") == "assistant" and not calls
            self.find(
                TamperKind.UNSENT_TURN,
                exchange,
                index,
                "a user turn the runner did not send" + (" after the arm's last answer" if after else ""),
            )

    def _accept(self, exchange: ExchangeRecord, message: Any) -> None:
        self.conversation.members.append(exchange)
        if message is not None:
            self.history.append(HistoryMessage(len(self.history), exchange.sequence, message))
        reply = _reply(exchange)
        if reply is not None:
            answer = {"role": "assistant", "content": reply}
            self.history.append(HistoryMessage(len(self.history), exchange.sequence, answer))
            self.agent_prompts.update(
                str(call["input"]["prompt"]).strip()
                for call in _calls(answer)
                if call.get("name") in self.conversation.harness.subagent_tools
                and isinstance(call.get("input"), dict)
                and "prompt" in call["input"]
            )


def _results(message: Any) -> set[str]:
    return {str(b.get("tool_use_id")) for b in message_blocks(message) if b.get("type") == "tool_result"}


def _notice(message: Any, harness: Harness) -> bool:
    """A user message of harness reminders alone (what the harness sends when a background sub-agent reports)."""
    texts = message_texts(message)
    return bool(texts) and not prose_texts(message, harness) and not _results(message)


def harness_conversation(exchanges: Iterable[ExchangeRecord], runner: RunnerRecord) -> Conversation:
    """The harness's conversation among ``exchanges``, chained from the runner's own record of the arm."""
    reader = _Reader(runner, Conversation(cwd=runner.cwd, harness=harness_named(runner.harness)))
    for exchange in sorted(exchanges, key=lambda e: e.sequence):
        if is_messages_request(exchange):
            reader.read(exchange)
    return reader.conversation


def model_requests(conversation: Conversation) -> Sequence[ExchangeRecord]:
    """Every request whose content reached a model of the arm by the harness's doing: members and sub-agents'."""
    return [*conversation.members, *conversation.side]
