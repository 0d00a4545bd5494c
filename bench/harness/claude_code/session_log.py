"""Claude Code's session JSONL (ground truth) and stream-json output, read into a normalised transcript.

Every step's source comes from the record's structure, never from searching its text: tool results and the
agent's own words quote hook output verbatim, so only the record type can say who wrote a sentence.
Injected context is the ``hook_additional_context`` attachment (any hook event), a ``hook_success`` of a
SessionStart / UserPromptSubmit hook whose plain stdout the CLI adds to the context, or the user-level instruction
file of an ``instructions`` attachment (``files[]`` with ``type: "User"``: ``~/.claude/CLAUDE.md``). Record types
this reader does not know are skipped and listed in the transcript.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ...contracts.usage import TokenUsage
from ...errors import ContractError
from ..transcript import HOOK_SUCCESS, Channel, ServerStatus, Step, StepSource, ToolCall, ToolResult, Transcript

__all__ = ["HARNESS", "hook_channel", "parse_claude_session"]

HARNESS = "claude-code"
# Bookkeeping records that carry nothing the model was shown.
_BOOKKEEPING = frozenset(
    {
        "queue-operation", "last-prompt", "file-history-snapshot", "progress", "ai-title", "custom-title",
        "permission-mode", "mode", "tag", "api-request-shape", "api-request-blob", "api-request", "tools-used",
        "atis-latch", "cost-state",
    }
)  # fmt: skip
_PLAIN_STDOUT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit"})
_HOOK_CHANNELS = {
    "UserPromptSubmit": Channel.PROMPT_TIME_RETRIEVAL,
    "PostToolUse": Channel.ANCHOR_TRIGGERED_RECALL,
    "SessionStart": Channel.SESSION_START,
}


def hook_channel(hook: str) -> Channel:
    """The channel of a hook event or hook name ("PostToolUse:Read", "SessionStart:resume")."""
    return _HOOK_CHANNELS.get(hook.split(":", 1)[0], Channel.OTHER)


def _texts(content: Any) -> str:
    """Text of a content value: a string, a list of strings, or a list of blocks with ``text``."""
    if isinstance(content, str):
        return content
    parts = []
    for item in content if isinstance(content, list) else []:
        if isinstance(item, str):
            parts.append(item)
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            parts.append(item["text"])
    return "\n".join(parts)


@dataclass(frozen=True)
class _Draft:
    """A step before it is numbered."""

    source: StepSource
    origin: str
    text: str = ""
    channel: Channel | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    trigger: str | None = None
    message_id: str | None = None
    usage: TokenUsage | None = None


def _user(record: dict[str, Any]) -> Iterator[_Draft]:
    content = record.get("message", {}).get("content")
    prose = StepSource.SYSTEM if record.get("isMeta") or record.get("isCompactSummary") else StepSource.USER
    if isinstance(content, str):
        yield _Draft(prose, "user", content)
        return
    blocks = [b for b in content or [] if isinstance(b, dict)]
    results = tuple(
        ToolResult(
            tool_use_id=str(b.get("tool_use_id")), text=_texts(b.get("content")), is_error=b.get("is_error") is True
        )
        for b in blocks
        if b.get("type") == "tool_result"
    )
    if results:
        yield _Draft(StepSource.TOOL, "user:tool_result", tool_results=results)
    text = _texts([b for b in blocks if b.get("type") == "text"])
    if text:
        yield _Draft(prose, "user", text)


def _assistant(record: dict[str, Any]) -> Iterator[_Draft]:
    message = record.get("message", {})
    blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
    calls = tuple(
        ToolCall(id=str(b.get("id")), name=str(b.get("name")), input=b.get("input") or {})
        for b in blocks
        if b.get("type") == "tool_use"
    )
    text = _texts([b for b in blocks if b.get("type") == "text"])
    usage = TokenUsage.of(message.get("usage")) if message.get("usage") else None
    yield _Draft(StepSource.AGENT, "assistant", text, None, calls, (), None, message.get("id"), usage)


def _attachment(record: dict[str, Any]) -> Iterator[_Draft]:
    attachment = record.get("attachment") or {}
    kind = str(attachment.get("type"))
    origin = f"attachment:{kind}"
    hook = str(attachment.get("hookName") or attachment.get("hookEvent") or "")
    event = str(attachment.get("hookEvent") or hook.split(":", 1)[0])
    text = _texts(attachment.get("content"))
    if kind == "hook_additional_context" or (kind == "hook_success" and event in _PLAIN_STDOUT_EVENTS and text):
        channel = hook_channel(hook)
        trigger = attachment.get("toolUseID") if channel is Channel.ANCHOR_TRIGGERED_RECALL else None
        yield _Draft(StepSource.INJECTED, f"{origin}:{hook}", text, channel, trigger=trigger)
    elif _hook_failed(kind, attachment):  # a failing hook is the memory system's fault made visible: kept
        detail = str(attachment.get("stderr") or "") or text or f"exit code {attachment.get('exitCode')}"
        yield _Draft(StepSource.SYSTEM, f"{origin}:{hook}", detail)
    elif kind == "hook_success":  # kept so a hook that failed on some calls is told from one that failed on all
        yield _Draft(StepSource.SYSTEM, f"{HOOK_SUCCESS}:{hook}", text)
    elif kind == "instructions":
        yield from _instructions(attachment, origin)
    elif not kind.startswith("hook_"):  # other hook records are the hook runner's bookkeeping, not context
        yield _Draft(StepSource.SYSTEM, origin, text)


def _instructions(attachment: dict[str, Any], origin: str) -> Iterator[_Draft]:
    """The instruction files the CLI loaded by itself: the user-level one (``~/.claude/CLAUDE.md``) is injected
    context, the static-context channel when a memory system declared it; a project's own are the harness's
    context, which both arms get alike."""
    for loaded in attachment.get("files") or []:
        if not isinstance(loaded, dict):
            continue
        path, text = str(loaded.get("path")), _texts(loaded.get("content"))
        if loaded.get("type") == "User":
            yield _Draft(StepSource.INJECTED, f"{origin}:{path}", text, Channel.STATIC_CONTEXT)
        else:
            yield _Draft(StepSource.SYSTEM, f"{origin}:{path}", text)


def _hook_failed(kind: str, attachment: dict[str, Any]) -> bool:
    """A hook record saying the hook failed: an error or cancellation record, or a success record with a non-zero
    exit code."""
    if not kind.startswith("hook_"):
        return False
    code = attachment.get("exitCode")
    return "error" in kind or "cancel" in kind or (isinstance(code, int) and code != 0)


def _system(record: dict[str, Any]) -> Iterator[_Draft]:
    yield _Draft(
        StepSource.SYSTEM,
        f"{record['type']}:{record.get('subtype', '')}",
        _texts(record.get("content") or record.get("summary")),
    )


_READERS = {"user": _user, "assistant": _assistant, "attachment": _attachment, "system": _system, "summary": _system}


def _records(data: bytes, what: str) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise ContractError(f"{what} line {number} is not JSON ({exc}); is this a Claude Code JSONL file?") from exc
        if not isinstance(record, dict):
            raise ContractError(f"{what} line {number} is not a JSON object")
        yield record


@dataclass(frozen=True)
class _RunSummary:
    session_id: str | None
    version: str | None
    cost_usd: float | None
    duration_ms: int | None
    servers: tuple[tuple[str, str, str], ...]  # (name, status, error) of each MCP server the init event lists


def _servers(init: dict[str, Any]) -> tuple[tuple[str, str, str], ...]:
    listed = init.get("mcp_servers")
    return tuple(
        (str(server.get("name")), str(server.get("status")), str(server.get("error") or ""))
        for server in (listed if isinstance(listed, list) else [])
        if isinstance(server, dict)
    )


def _summarise_stream(data: bytes, what: str) -> _RunSummary:
    """One ``claude -p --output-format stream-json`` run: its init line and its final result line."""
    session_id = version = None
    cost = duration = None
    servers: tuple[tuple[str, str, str], ...] = ()
    for record in _records(data, what):
        session_id = record.get("session_id", session_id)
        if record.get("type") == "system" and record.get("subtype") == "init":
            version, servers = record.get("claude_code_version"), _servers(record)
        elif record.get("type") == "result":
            cost, duration = record.get("total_cost_usd"), record.get("duration_ms")
    return _RunSummary(session_id, version, cost, duration, servers)


def _usage_once_per_response(drafts: Sequence[_Draft]) -> TokenUsage:
    """A response split over several records repeats its usage on each; count it once, as the last one says."""
    by_message: dict[str, TokenUsage] = {}
    loose = TokenUsage()
    for draft in drafts:
        if draft.usage is None:
            continue
        if draft.message_id is None:
            loose = loose + draft.usage
        else:
            by_message[draft.message_id] = draft.usage
    return sum(by_message.values(), loose)


@dataclass(frozen=True)
class _SessionRecords:
    """What one pass over a session JSONL finds: its steps in order, and what identifies the session."""

    drafts: tuple[tuple[_Draft, str | None], ...]
    unknown: frozenset[str]
    session_ids: frozenset[str]
    versions: tuple[str, ...]


def _read_session(session: bytes) -> _SessionRecords:
    drafts: list[tuple[_Draft, str | None]] = []
    unknown: set[str] = set()
    session_ids: set[str] = set()
    versions: list[str] = []
    for record in _records(session, "session JSONL"):
        kind = str(record.get("type"))
        if isinstance(record.get("sessionId"), str):
            session_ids.add(record["sessionId"])
        if isinstance(record.get("version"), str):
            versions.append(record["version"])
        reader = _READERS.get(kind)
        if reader is None:
            if kind not in _BOOKKEEPING:
                unknown.add(kind)
            continue
        drafts.extend((draft, record.get("timestamp")) for draft in reader(record))
    return _SessionRecords(tuple(drafts), frozenset(unknown), frozenset(session_ids), tuple(versions))


def parse_claude_session(session: bytes, streams: Sequence[bytes] = ()) -> Transcript:
    """Normalise a session JSONL; ``streams`` are the stream-json outputs of the runs that wrote it, in order.

    The stream outputs contribute only what the session file lacks: the CLI version, cost and duration.
    """
    read = _read_session(session)
    if len(read.session_ids) != 1:
        raise ContractError(f"a session JSONL holds one session, found session ids {sorted(read.session_ids)}")
    (session_id,) = read.session_ids
    runs = [_summarise_stream(data, f"stream-json output {n}") for n, data in enumerate(streams, 1)]
    for n, run in enumerate(runs, 1):
        if run.session_id != session_id:
            raise ContractError(f"stream-json output {n} is of session {run.session_id}, the JSONL of {session_id}")
    costs = [run.cost_usd for run in runs]
    durations = [run.duration_ms for run in runs]
    steps = tuple(
        Step(
            index=index,
            source=draft.source,
            channel=draft.channel,
            origin=draft.origin,
            text=draft.text,
            tool_calls=draft.tool_calls,
            tool_results=draft.tool_results,
            trigger_tool_use_id=draft.trigger,
            message_id=draft.message_id,
            usage=draft.usage,
            timestamp=timestamp,
        )
        for index, (draft, timestamp) in enumerate(read.drafts)
    )
    stamps = [step.timestamp for step in steps if step.timestamp]
    return Transcript(
        harness=HARNESS,
        harness_version=next(
            (run.version for run in runs if run.version), read.versions[-1] if read.versions else None
        ),
        session_id=session_id,
        steps=steps,
        usage=_usage_once_per_response([draft for draft, _ in read.drafts]),
        cost_usd=float(sum(c for c in costs if c is not None)) if runs and None not in costs else None,
        duration_ms=int(sum(d for d in durations if d is not None)) if runs and None not in durations else None,
        started_at=min(stamps) if stamps else None,
        finished_at=max(stamps) if stamps else None,
        unknown_record_types=tuple(sorted(read.unknown)),
        runs=len(runs),
        servers=_server_statuses(runs),
    )


def _server_statuses(runs: Sequence[_RunSummary]) -> tuple[ServerStatus, ...]:
    return tuple(
        ServerStatus(step=n, name=name, status=status, error=error)
        for n, run in enumerate(runs)
        for name, status, error in run.servers
    )
