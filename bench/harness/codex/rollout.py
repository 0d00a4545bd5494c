"""Codex's rollout file (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-...-<thread id>.jsonl``) read into the common
transcript.

Only ``response_item`` records are conversation; every injected message carries, per content part, the CLI's own
label of what it is (``internal_chat_message_metadata_passthrough.content_item_kinds``), so a step's author comes
from the record, never from its text. Hook context (``hooks.additional_context``) names no hook event; its event is
read from its place in history, where the CLI puts it (docs/harnesses.md): right after the tool call that fired it
(before the call's output), right after the prompt for a prompt-time hook, elsewhere (a session's start or
resumption) for a session-start hook. Record types this reader does not know are skipped and listed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ...contracts.strict_json import parse_json, parse_json_object
from ...contracts.usage import TokenUsage
from ...errors import ContractError
from ..transcript import Channel, ServerStatus, Step, StepSource, ToolCall, ToolResult, Transcript
from .argv import thread_id_of
from .injected import CALLS, OUTPUTS, HookPlace, agents_text, hook_name, namespaces_announced
from .injection import INSTRUCTIONS_FILE

__all__ = ["HARNESS", "parse_rollout"]

HARNESS = "codex"
_BOOKKEEPING = frozenset({"event_msg", "world_state", "turn_context", "compacted"})
# The CLI's labels of a message part (content_item_kinds); any other kind is the harness's own context (SYSTEM).
_PROMPT_KIND, _AGENTS_KIND, _HOOK_KIND = "user.text", "agents_md.instructions", "hooks.additional_context"
_MCP = "mcp__"


def _step(source: StepSource, origin: str, text: str = "", channel: Channel | None = None, **fields: Any) -> Step:
    """A step before it is numbered (index 0 until the transcript is assembled)."""
    return Step(index=0, source=source, origin=origin, text=text, channel=channel, **fields)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    items = content if isinstance(content, list) else []
    return "\n".join(
        str(item["text"]) for item in items if isinstance(item, dict) and isinstance(item.get("text"), str)
    )


def _arguments(raw: Any) -> dict[str, Any]:
    """A call's arguments as an object; a string that is not a JSON object is kept under ``input``."""
    try:
        parsed = parse_json(raw, "a tool call's arguments") if isinstance(raw, str) else raw
    except ContractError:  # the model's own words: kept as they came
        parsed = None
    return parsed if isinstance(parsed, dict) else {"input": raw if isinstance(raw, str) else json.dumps(raw)}


def _call(item: dict[str, Any]) -> ToolCall:
    """The call under the name hooks and policies use: ``mcp__<server>__<tool>`` for a namespaced MCP tool."""
    name = str(item.get("name", item.get("type")))
    namespace = item.get("namespace")
    if isinstance(namespace, str) and namespace:
        name = f"{namespace}__{name}"
    raw = item.get("arguments") if item.get("type") != "custom_tool_call" else {"input": item.get("input", "")}
    return ToolCall(id=str(item.get("call_id")), name=name, input=_arguments(raw))


class _History:
    """Reads response items in order; a hook context's channel and hook are read from its place
    (:class:`.HookPlace`), named as grading names the context it finds at that place in a request
    (:func:`.injected.hook_name`): an injected step's origin is ``response_item:<kind>:<hook or file>``."""

    def __init__(self) -> None:
        self.place = HookPlace()
        self.tools: dict[str, str] = {}  # call id -> the tool as the model called it
        self.servers: dict[str, None] = {}  # the MCP servers the settings announced, in order

    def item(self, item: dict[str, Any]) -> Iterator[Step]:
        yield from self._drafts(item)
        self.place.see(item)

    def _drafts(self, item: dict[str, Any]) -> Iterator[Step]:
        kind = str(item.get("type"))
        origin = f"response_item:{kind}"
        if kind == "message" and item.get("role") == "assistant":
            yield _step(StepSource.AGENT, origin, _text(item.get("content")), message_id=item.get("id"))
        elif kind == "message":
            if item.get("role") == "developer":
                spaces = namespaces_announced(_text([part]) for part in item.get("content") or [])
                self.servers.update(dict.fromkeys(s.removeprefix(_MCP) for s in spaces if s.startswith(_MCP)))
            yield from self._injected(item)
        elif kind in CALLS:
            call = _call(item)
            self.tools[call.id] = call.name
            yield _step(StepSource.AGENT, origin, tool_calls=(call,), message_id=item.get("id"))
        elif kind in OUTPUTS:
            output = item.get("output", item.get("tools"))
            text = output if isinstance(output, str) else _text(output) or json.dumps(output)
            result = ToolResult(tool_use_id=str(item.get("call_id")), text=text)
            yield _step(StepSource.TOOL, origin, tool_results=(result,))
        elif kind == "reasoning":
            yield _step(StepSource.AGENT, origin, _text(item.get("summary")), message_id=item.get("id"))

    def _injected(self, item: dict[str, Any]) -> Iterator[Step]:
        """A user or developer message, part by part, each by the kind the CLI recorded for it."""
        meta = item.get("internal_chat_message_metadata_passthrough")
        kinds = meta.get("content_item_kinds") if isinstance(meta, dict) else None
        content = item.get("content")
        parts: list[Any] = content if isinstance(content, list) else []
        if not isinstance(kinds, list) or len(kinds) != len(parts):
            kinds = ["unknown"] * len(parts)
        for kind, part in zip(kinds, parts, strict=True):
            origin, text = f"response_item:{kind}", _text([part])
            if kind == _HOOK_KIND:
                channel, trigger = self.place.channel()
                hook = hook_name(
                    self.tools.get(trigger, trigger) if trigger else None,
                    trigger is None and channel is Channel.PROMPT_TIME_RETRIEVAL,
                )
                yield _step(StepSource.INJECTED, f"{origin}:{hook}", text, channel, trigger_tool_use_id=trigger)
            elif kind == _AGENTS_KIND:
                loaded = agents_text(text)  # the file's contents, as grading reads them in a request
                file = f"{origin}:{INSTRUCTIONS_FILE}"
                yield _step(StepSource.INJECTED, file, text if loaded is None else loaded, Channel.STATIC_CONTEXT)
            else:
                yield _step(StepSource.USER if kind == _PROMPT_KIND else StepSource.SYSTEM, origin, text)


def _records(data: bytes, name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        yield number, parse_json_object(line, f"{name} line {number}")


def _usage(usage: Any) -> TokenUsage:
    """A Responses usage report in the transcript's terms: cached input is a part of ``input_tokens`` there."""
    counts = usage if isinstance(usage, dict) else {}
    cached = int(counts.get("cached_input_tokens") or 0)
    return TokenUsage(
        input_tokens=max(int(counts.get("input_tokens") or 0) - cached, 0),
        output_tokens=int(counts.get("output_tokens") or 0),
        cache_read_input_tokens=cached,
    )


def parse_rollout(rollout: bytes, name: str, streams: Sequence[bytes] = ()) -> Transcript:
    """Normalise a rollout file named ``name`` (for errors); ``streams`` are the ``--json`` outputs of the runs that
    wrote it, in order, each checked to be of the same thread."""
    history = _History()
    drafts: list[Step] = []
    unknown: set[str] = set()
    metas: list[dict[str, Any]] = []
    usage = TokenUsage()
    durations: list[int] = []
    for _, record in _records(rollout, name):
        kind, payload, stamp = str(record.get("type")), record.get("payload"), record.get("timestamp")
        payload = payload if isinstance(payload, dict) else {}
        if kind == "response_item":
            when = stamp if isinstance(stamp, str) else None
            drafts += [draft.model_copy(update={"timestamp": when}) for draft in history.item(payload)]
        elif kind == "session_meta":
            metas.append(payload)
        elif kind == "token_usage_record":
            usage = usage + _usage(payload.get("usage"))
        elif kind == "event_msg" and payload.get("type") == "task_complete":
            durations += [payload["duration_ms"]] if isinstance(payload.get("duration_ms"), int) else []
        elif kind not in _BOOKKEEPING:
            unknown.add(kind)
    threads = {str(meta.get("id")) for meta in metas}
    if len(threads) != 1:
        raise ContractError(f"{name} holds one thread, found session_meta ids {sorted(threads)}")
    thread = threads.pop()
    for number, stream in enumerate(streams, 1):
        if thread_id_of(stream) != thread:
            raise ContractError(f"--json output {number} is of thread {thread_id_of(stream)}, {name} of {thread}")
    steps = tuple(draft.model_copy(update={"index": index}) for index, draft in enumerate(drafts))
    stamps = [step.timestamp for step in steps if step.timestamp]
    return Transcript(
        harness=HARNESS,
        harness_version=next((str(m["cli_version"]) for m in metas if isinstance(m.get("cli_version"), str)), None),
        session_id=thread,
        steps=steps,
        usage=usage,
        cost_usd=None,  # the CLI reports no cost; the gateway's metering prices the exchanges
        duration_ms=sum(durations) if durations else None,
        started_at=min(stamps) if stamps else None,
        finished_at=max(stamps) if stamps else None,
        unknown_record_types=tuple(sorted(unknown)),
        runs=len(streams),
        servers=_servers(history.servers, len(streams)),
    )


def _servers(announced: Iterable[str], runs: int) -> tuple[ServerStatus, ...]:
    """Each announced MCP server, connected in every run. The CLI records no server status, but every server is
    ``required`` (config.py): one that fails its handshake ends the run with exit 1 before its output names the thread
    (docs/harnesses.md), and each run's output was checked to name it. A server the settings never announced is
    missing, which grading reports as the attachment failing."""
    return tuple(ServerStatus(step=run, name=name, status="connected") for run in range(runs) for name in announced)
