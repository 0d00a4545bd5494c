"""The memory's state as restore left it (the runner's copy, taken before the arm ran), as grading reads it.

Two uses. What a declared instructions file delivered must be that file as restore wrote it: the harness's copy in
the conversation is compared with the runner's (:func:`static_mismatches`). And a state read is any tool result of
the agent's own that carries the state's content, whatever path or glob produced it: the state's text is cut into
fixed pieces (:data:`PIECE` characters of printable text, aligned from the start of each run), and a result that
holds one of them read the memory (:func:`content_reads`). Pieces the start workspace also holds are left out (the
notes may quote the code), and so is any the model itself wrote earlier in the conversation (reading back what it
wrote from the memory's delivery is not reading the memory).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from itertools import compress
from typing import Literal

from ..contracts import ContractModel, Document
from ..harness.transcript import Channel
from .chain import Conversation
from .gateway_view import ReceivedContext, tool_calls, tool_input_text, tool_results

__all__ = ["PIECE", "PUBLIC_CONTRACTS", "RestoredState", "content_reads", "restored_state", "static_mismatches"]

PIECE = 40
_PRINTABLE = re.compile(rb"[\x20-\x7e]{%d,}" % PIECE)


class RestoredState(Document):
    """What grading reads of the runner's copy of a memory's state: each text file's text (by the path the arm saw
    it at) and the state's pieces the start workspace does not hold. A document, so a published bundle carries it
    and ``verify`` re-derives the grade from it."""

    kind: Literal["restored-state"] = "restored-state"
    schema_version: Literal[1] = 1
    texts: dict[str, str]
    pieces: tuple[str, ...]  # sorted


def restored_state(files: Mapping[str, bytes], workspace: Iterable[bytes]) -> RestoredState:
    """The grading view of the state ``files`` (path -> bytes), beside the start ``workspace``'s files' bytes."""
    shown = [data.decode("utf-8", "replace") for data in workspace]
    pieces = {
        run[start : start + PIECE].decode("ascii")
        for data in files.values()
        for run in _PRINTABLE.findall(data)
        for start in range(0, len(run) - PIECE + 1, PIECE)
    }
    texts = {}
    for path, data in files.items():
        try:
            texts[path] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return RestoredState(texts=texts, pieces=tuple(sorted(p for p in pieces if not any(p in t for t in shown))))


def static_mismatches(received: Iterable[ReceivedContext], state: RestoredState) -> tuple[str, ...]:
    """Each declared instructions file whose contents in the conversation are not the file restore wrote."""
    found = []
    for context in received:
        if context.channel is not Channel.STATIC_CONTEXT:
            continue
        restored = state.texts.get(context.hook)
        if restored is None or restored.strip() != context.text.strip():
            found.append(f"message {context.message}: {context.hook} is not the file restore wrote")
    return tuple(found)


def content_reads(conversation: Conversation, state: RestoredState, own_tools: tuple[str, ...]) -> tuple[str, ...]:
    """The agent's tool results (of no tool in ``own_tools``, the memory's) carrying a piece of the state."""
    calls = tool_calls(conversation)
    cut = frozenset(state.pieces)  # a piece of another length is in no window: harmless here
    odd = tuple(compress(state.pieces, map(PIECE.__ne__, map(len, state.pieces))))
    found = []
    for result in tool_results(conversation):
        if own_tools and result.tool.startswith(own_tools):
            continue
        held = _held(result.output, cut, odd)
        if not held:
            continue
        authored = " ".join(tool_input_text(call.input) for call in calls if call.message < result.message)
        if any(piece not in authored for piece in held):
            found.append(f"message {result.message}: {result.tool} {result.tool_use_id} carries the memory's state")
    return tuple(found)


def _held(text: str, cut: frozenset[str], odd: tuple[str, ...]) -> set[str]:
    """The pieces ``text`` holds. A piece restore ``cut`` is :data:`PIECE` characters long, so ``text`` holds one
    exactly when one of its windows of that length is one: a pass over ``text``, where asking each piece is pieces x
    text. A piece of another length (``odd``: a bundle's state is the publisher's word until re-derived) is asked."""
    held = {text[start : start + PIECE] for start in range(len(text) - PIECE + 1)} & cut if cut else set()
    held.update(piece for piece in odd if piece in text)
    return held


PUBLIC_CONTRACTS: tuple[type[ContractModel], ...] = (RestoredState,)
