"""What a challenge declares about its memory, so grading can recognise it without reading the memory system."""

from __future__ import annotations

import re
from typing import Self

from pydantic import Field, model_validator

from ..contracts import ContractModel
from ..harness.transcript import Channel

__all__ = ["InstalledHook", "MemoryDeclaration"]


class InstalledHook(ContractModel):
    """A hook the runner installed in the arm's harness settings: its event and, for tool events, its matcher.

    Only context from an installed hook counts as injected: a hook the agent wrote into a settings file of its
    own is not the memory system's channel, whatever it prints.
    """

    event: str = Field(min_length=1)  # "UserPromptSubmit", "PostToolUse", "SessionStart", ...
    matcher: str | None = None  # a tool-name pattern (a regular expression; empty or "*": every tool)

    def matches(self, hook: str) -> bool:
        """Whether a hook name as the harness reports it ("PostToolUse:Read", "UserPromptSubmit") is this hook's."""
        event, _, tool = hook.partition(":")
        if event != self.event:
            return False
        if not tool or self.matcher in (None, "", "*") or self.event not in ("PreToolUse", "PostToolUse"):
            return True
        try:
            return re.fullmatch(self.matcher, tool) is not None
        except re.error:
            return self.matcher == tool


class MemoryDeclaration(ContractModel):
    """Distinctive phrases of the memory (delivery) and things only the memory says (use).

    ``anchored_paths`` are workspace files the memory points at; ``identifiers`` are names only the memory
    gives. Both are markers of use: an agent that acts on one after delivery, having seen it nowhere else,
    acted on the memory. ``tool_servers`` names the MCP servers the memory system declares: a result of one of
    their tools (``mcp__<server>__<tool>``) is the memory-tool channel. ``hooks`` are the hooks the runner
    installed in the arm: only their context counts as injected. ``state_paths`` are where the system's restored
    state is mounted in the arm: a tool call of the agent's own naming one reads the memory by an unintended
    channel, reported as its own. ``static_files`` are the files the harness loads by itself that the system's
    state is mounted as (the harness's user-level instructions file): their contents, as the harness loaded them,
    are the static-context channel.
    """

    phrases: tuple[str, ...] = Field(min_length=1)
    anchored_paths: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    tool_servers: tuple[str, ...] = ()
    # None: the caller does not know what was installed (reading a captured session); a run always names them
    hooks: tuple[InstalledHook, ...] | None = None
    state_paths: tuple[str, ...] = ()
    static_files: tuple[str, ...] = ()

    def installed(self, hook: str) -> bool:
        """Whether the context of ``hook`` (as the harness names it) came from a hook the runner installed."""
        return self.hooks is None or any(installed.matches(hook) for installed in self.hooks)

    def delivers(self, channel: Channel, origin: str) -> bool:
        """Whether injected context of ``channel`` from ``origin`` (a hook's name, or the path of a file the harness
        loaded) is this memory's: an installed hook's, or a file the system declared."""
        if channel is Channel.STATIC_CONTEXT:
            return origin in self.static_files
        return self.installed(origin)

    @property
    def tool_prefixes(self) -> tuple[str, ...]:
        """The tool-name prefixes of the declared servers' tools, as the harness names them."""
        return tuple(f"mcp__{server}__" for server in self.tool_servers)

    @model_validator(mode="after")
    def _no_empty_marker(self) -> Self:
        if any(not value.strip() for value in (*self.phrases, *self.anchored_paths, *self.identifiers)):
            raise ValueError("phrases and markers must be non-empty: an empty one matches every text")
        return self

    @property
    def markers(self) -> tuple[str, ...]:
        return self.anchored_paths + self.identifiers
