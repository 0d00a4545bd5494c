"""A declared attachment as the neutral request a harness renders, sealed with the container's base environment.

Every server and hook command a harness writes starts under ``env -i`` with only the container's base environment
(:data:`~bench.sandbox.layout.BASE_ENV`: home, locale, path, user) and what the declaration names
(:mod:`bench.harness.sealing`). The replay of a system's memory-tool calls starts its servers the same way, so
both see the same environment.
"""

from __future__ import annotations

from pydantic import JsonValue

from ..grading.memory_declaration import InstalledHook
from ..harness import AttachmentRequest, Harness, HookSpec, McpServerSpec, MemoryChannel
from ..harness.sealing import sealed_argv
from ..sandbox.layout import BASE_ENV
from ..suite.memory_system import Attachment, McpServer
from .harness_files import base_url

__all__ = ["attachment_request", "installed_hooks", "needed_channels", "sealed_server"]


def sealed_server(server: McpServer) -> dict[str, JsonValue]:
    """One MCP server as the replay driver starts it: its declared command, sealed."""
    command, *args = sealed_argv(server.command, server.args, server.env, BASE_ENV)
    return {"type": "stdio", "command": command, "args": list(args), "env": {}}


def attachment_request(declared: Attachment | None) -> AttachmentRequest:
    """What ``declared`` (None: the control's, no channel) asks of the harness."""
    if declared is None:
        return AttachmentRequest(base_env=dict(BASE_ENV), base_url=base_url())
    hooks = tuple(
        HookSpec(
            event=event,
            matcher=hook.matcher,
            tools=hook.tools,
            command=hook.command,
            timeout_seconds=hook.timeout_seconds,
        )
        for event, declared_hooks in declared.hooks.items()
        for hook in declared_hooks
    )
    servers = tuple(
        McpServerSpec(name=name, command=server.command, args=server.args, env=dict(server.env))
        for name, server in sorted(declared.mcp_servers.items())
    )
    return AttachmentRequest(
        base_env=dict(BASE_ENV),
        base_url=base_url(),
        mcp_servers=servers,
        hooks=hooks,
        builtin_memory=declared.builtin_memory,
        native_settings=None if declared.settings is None else dict(declared.settings),
    )


def installed_hooks(harness: Harness, declared: Attachment) -> tuple[InstalledHook, ...]:
    """The hooks ``harness`` installs for ``declared``: one per event and matcher, in the order it installs them."""
    found: list[InstalledHook] = []
    for hook in harness.installed_hooks(attachment_request(declared)):
        installed = InstalledHook(event=str(hook.event), matcher=hook.matcher)
        if not found or found[-1] != installed:
            found.append(installed)
    return tuple(found)


def needed_channels(harness: Harness, declared: Attachment) -> frozenset[MemoryChannel]:
    """The channels ``declared`` needs of ``harness``: those it declares, hooks in a native settings file too."""
    request = attachment_request(declared)
    hooks = {MemoryChannel.HOOKS} if harness.installed_hooks(request) else set()
    instructions = {MemoryChannel.INSTRUCTIONS_FILE} if declared.instructions is not None else set()
    return request.channels | hooks | instructions
