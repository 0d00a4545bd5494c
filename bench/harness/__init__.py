"""The harnesses: every coding-agent CLI the bench runs, each behind :class:`~bench.harness.base.Harness`.

A suite names its harness (``claude-code`` when it names none); :func:`harness_named` returns it. Adding a
harness is adding a package under ``bench/harness/`` and a line to :data:`_REGISTRY`; nothing outside this
package names a harness's files, formats or environment variables (``tests/harness/test_harness_boundary.py``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..errors import ContractError
from .base import (
    AttachmentRequest,
    ClientCall,
    ConfigFile,
    CredentialPattern,
    Harness,
    HarnessName,
    HookEvent,
    HookSpec,
    HookTool,
    ImageRecipe,
    InjectedBlock,
    InjectionFormat,
    LoadedFile,
    McpServerSpec,
    MemoryChannel,
    RenderedConfig,
    require_channels,
    require_native_settings,
)

__all__ = [
    "DEFAULT_HARNESS",
    "HARNESS_NAMES",
    "AttachmentRequest",
    "ClientCall",
    "ConfigFile",
    "CredentialPattern",
    "Harness",
    "HarnessName",
    "HookEvent",
    "HookSpec",
    "HookTool",
    "ImageRecipe",
    "InjectedBlock",
    "InjectionFormat",
    "LoadedFile",
    "McpServerSpec",
    "MemoryChannel",
    "RenderedConfig",
    "all_harnesses",
    "default_unnamed",
    "harness_named",
    "require_channels",
    "require_native_settings",
]

DEFAULT_HARNESS = "claude-code"
if TYPE_CHECKING:
    # Never run: the statements name every registered package, so a stage's code digest (bench/builder/code_digest.py
    # reads import statements) covers the harness code it runs, which the registry imports by name.
    from . import claude_code, codex  # noqa: F401

# name -> (module, class): imported on first use, so naming one harness never imports another's code.
_REGISTRY: dict[str, tuple[str, str]] = {
    "claude-code": ("bench.harness.claude_code", "ClaudeCode"),
    "codex": ("bench.harness.codex", "Codex"),
}
HARNESS_NAMES = tuple(sorted(_REGISTRY))
_LOADED: dict[str, Harness] = {}


def harness_named(name: str) -> Harness:
    """The harness registered as ``name``; an unknown name is refused, naming the known ones."""
    if name not in _REGISTRY:
        raise ContractError(
            f"unknown harness {name!r}; known harnesses: {', '.join(HARNESS_NAMES)}",
            field="harness",
            expected=list(HARNESS_NAMES),
            actual=name,
        )
    if name not in _LOADED:
        module, attribute = _REGISTRY[name]
        harness: Harness = getattr(importlib.import_module(module), attribute)()
        _LOADED[name] = harness
    return _LOADED[name]


def all_harnesses() -> tuple[Harness, ...]:
    """Every registered harness, by name (publication's leak check covers them all)."""
    return tuple(harness_named(name) for name in HARNESS_NAMES)


def default_unnamed(dumped: dict[str, Any]) -> dict[str, Any]:
    """A serialized document or params without its ``harness`` field when that names the default: what was written
    before harnesses were named keeps its digest and its action keys."""
    if dumped.get("harness") == DEFAULT_HARNESS:
        dumped.pop("harness")
    return dumped
