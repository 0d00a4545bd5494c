"""What a challenge declares about its memory, so grading can recognise it without reading the memory system."""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from ..contracts import ContractModel

__all__ = ["MemoryDeclaration"]


class MemoryDeclaration(ContractModel):
    """Distinctive phrases of the memory (delivery) and things only the memory says (use).

    ``anchored_paths`` are workspace files the memory points at; ``identifiers`` are names only the memory
    gives. Both are markers of use: an agent that acts on one after delivery, having seen it nowhere else,
    acted on the memory. ``tool_servers`` names the MCP servers the memory system declares: a result of one of
    their tools (``mcp__<server>__<tool>``) is the memory-tool channel.
    """

    phrases: tuple[str, ...] = Field(min_length=1)
    anchored_paths: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    tool_servers: tuple[str, ...] = ()

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
