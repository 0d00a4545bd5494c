"""The harness's own conversation in a gateway log: the only requests whose content counts as delivered.

The agent holds the gateway key in its environment and can send requests of its own; they are logged as its arm's
exchanges. A harness's conversation grows: each request repeats the previous request's messages, then the answer
it got, then new user content (:class:`~bench.gateway.conversation.MessageChain`). So the conversation is read as
a chain from the first request that carries the arm's first prompt:

- a request *continues* the chain when its messages are the tip's messages, then the tip's answer, then one new
  user message. The answer is compared as the harness repeats it: it fills its tools' defaults into a call's
  input (CLI 2.1.197 adds ``"replace_all": false`` to every Edit), so a repeated call may add keys whose values
  are not text; every key the model gave keeps its value, and a repeated call that adds text is another call.
  After an answer that used a tool, the new message must answer exactly those tool calls; after an answer that
  ended the turn, it must carry the arm's next prompt (a continuity challenge's follow-up), and only as many of
  those as the arm had prompts;
- a request after an answer that carried none (an error, a refusal) may repeat the tip's messages (a retry);
- at a resume, a harness may rebuild earlier messages (CLI 2.1.197 merged a hook's text into a tool result): such
  a request still counts when its first message is the chain's first and it ends with the tip's answer and a
  message carrying the next prompt;
- a request that continues an earlier member instead of the tip is a *fork*: two branches of one conversation,
  which the harness never makes (an agent-crafted copy of the conversation is the way to get one);
- everything else is *foreign*: not the harness's conversation, so never counted as delivered.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..gateway.conversation import MessageChain, without_cache_control
from ..gateway.exchange import ExchangeRecord

__all__ = [
    "Conversation",
    "harness_conversation",
    "is_messages_request",
    "message_blocks",
    "message_texts",
    "repeats_answer",
    "request_messages",
]


def is_messages_request(exchange: ExchangeRecord) -> bool:
    route = exchange.path.split("?", 1)[0]
    return exchange.method == "POST" and route == "/v1/messages" and isinstance(exchange.request_body, dict)


def _chain(exchange: ExchangeRecord) -> MessageChain | None:
    """The exchange's recorded chain; computed from its body for records made before the gateway recorded one."""
    if exchange.chain is not None:
        return exchange.chain
    assert isinstance(exchange.request_body, dict)
    return MessageChain.of(exchange.request_body, exchange.response_body)


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


def _tool_calls(answer: Any) -> set[str]:
    content = answer.get("content") if isinstance(answer, dict) else None
    blocks = content if isinstance(content, list) else []
    return {str(b.get("id")) for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"}


@dataclass
class Conversation:
    """The harness's requests of one arm, in order, and what the log held besides them."""

    members: list[ExchangeRecord] = field(default_factory=list)
    foreign: list[int] = field(default_factory=list)  # sequences of messages requests not in the conversation
    forks: list[int] = field(default_factory=list)  # requests continuing a member other than the tip
    rebuilt: list[int] = field(default_factory=list)  # requests that continued across a resume, rebuilt

    @property
    def sequences(self) -> tuple[int, ...]:
        return tuple(member.sequence for member in self.members)


@dataclass
class _Reader:
    prompts: Sequence[str]
    conversation: Conversation = field(default_factory=Conversation)
    chains: dict[int, MessageChain] = field(default_factory=dict)
    step: int = 0

    @property
    def tip(self) -> ExchangeRecord:
        return self.conversation.members[-1]

    def carries_prompt(self, exchange: ExchangeRecord, step: int) -> bool:
        if not self.prompts:
            return True  # no prompts given: the caller does not know them, so any new turn is accepted
        if step >= len(self.prompts):
            return False
        last = request_messages(exchange)[-1:] or [None]
        return any(self.prompts[step] in text for text in message_texts(last[0]))

    def answers_calls(self, exchange: ExchangeRecord, calls: set[str]) -> bool:
        last = request_messages(exchange)[-1:] or [None]
        answered = {str(b.get("tool_use_id")) for b in message_blocks(last[0]) if b.get("type") == "tool_result"}
        return answered == calls

    def read(self, exchange: ExchangeRecord) -> None:
        chain = _chain(exchange)
        if chain is None:
            self.conversation.foreign.append(exchange.sequence)
            return
        self.chains[exchange.sequence] = chain
        if not self.conversation.members:
            self._start(exchange)
            return
        tip = self.chains[self.tip.sequence]
        calls = _tool_calls(self.tip.response_body)
        if tip.reply is not None and _continues(self.tip, exchange, self.chains):
            self._next_turn(exchange, calls)
        elif tip.reply is None and chain.messages == tip.messages:
            self.conversation.members.append(exchange)  # a retry of a request that got no answer
        elif tip.reply is not None and not calls and self._rebuilt(tip, chain, exchange):
            self.conversation.rebuilt.append(exchange.sequence)
            self._accept_step(exchange)
        elif any(_continues(m, exchange, self.chains) for m in self.conversation.members[:-1]):
            self.conversation.forks.append(exchange.sequence)
        else:
            self.conversation.foreign.append(exchange.sequence)

    def _start(self, exchange: ExchangeRecord) -> None:
        if len(request_messages(exchange)) == 1 and self.carries_prompt(exchange, 0):
            self.conversation.members.append(exchange)
        else:
            self.conversation.foreign.append(exchange.sequence)

    def _next_turn(self, exchange: ExchangeRecord, calls: set[str]) -> None:
        if calls and self.answers_calls(exchange, calls):
            self.conversation.members.append(exchange)
        elif not calls and self.carries_prompt(exchange, self.step + 1):
            self._accept_step(exchange)
        else:
            self.conversation.foreign.append(exchange.sequence)

    def _accept_step(self, exchange: ExchangeRecord) -> None:
        self.step += 1
        self.conversation.members.append(exchange)

    def _rebuilt(self, tip: MessageChain, chain: MessageChain, exchange: ExchangeRecord) -> bool:
        root = self.chains[self.conversation.members[0].sequence]
        return (
            len(chain.messages) == len(tip.messages) + 2
            and chain.messages[0] == root.messages[0]
            and chain.messages[len(tip.messages)] == tip.reply
            and self.carries_prompt(exchange, self.step + 1)
        )


def _same_call(given: dict[str, Any], repeated: dict[str, Any]) -> bool:
    """A tool call the model gave and the harness repeated: same id, name and values, defaults added only."""
    if any(given.get(key) != repeated.get(key) for key in ("type", "id", "name")):
        return False
    mine, theirs = given.get("input"), repeated.get("input")
    if not isinstance(mine, dict) or not isinstance(theirs, dict):
        return bool(mine == theirs)
    added = [theirs[key] for key in theirs.keys() - mine.keys()]
    return all(theirs.get(key) == value for key, value in mine.items()) and not any(
        isinstance(value, (str, list, dict)) for value in added
    )


def repeats_answer(answer: Any, repeated: Any) -> bool:
    """Whether ``repeated`` (a request's message) is ``answer`` (a messages response) as the harness repeats it."""
    content = answer.get("content") if isinstance(answer, dict) and answer.get("type") == "message" else None
    if not isinstance(content, list) or not isinstance(repeated, dict) or repeated.get("role") != "assistant":
        return False
    theirs = without_cache_control(repeated.get("content"))
    if not isinstance(theirs, list) or len(theirs) != len(content):
        return False
    return all(
        _same_call(mine, other)
        if isinstance(mine, dict) and mine.get("type") == "tool_use" and isinstance(other, dict)
        else without_cache_control(mine) == other
        for mine, other in zip(content, theirs, strict=True)
    )


def _continues(earlier: ExchangeRecord, later: ExchangeRecord, chains: dict[int, MessageChain]) -> bool:
    """``later`` is ``earlier``'s messages, its answer (as the harness repeats it) and exactly one new message."""
    before, after = chains[earlier.sequence], chains[later.sequence]
    if before.reply is None or len(after.messages) != len(before.messages) + 2:
        return False
    size = len(before.messages)
    return after.messages[:size] == before.messages and (
        after.messages[size] == before.reply or repeats_answer(earlier.response_body, request_messages(later)[size])
    )


def harness_conversation(exchanges: Iterable[ExchangeRecord], prompts: Sequence[str] = ()) -> Conversation:
    """The harness's conversation among ``exchanges``; ``prompts`` are the arm's prompts, in order."""
    reader = _Reader(prompts)
    for exchange in sorted(exchanges, key=lambda e: e.sequence):
        if is_messages_request(exchange):
            reader.read(exchange)
    return reader.conversation
