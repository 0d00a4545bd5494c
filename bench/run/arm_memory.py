"""What each arm's grading and each attempt's page look for: the channels the arm's attachment installed."""

from __future__ import annotations

from collections.abc import Sequence

from ..agent.harness_files import container_path
from ..agent.sealed_env import installed_hooks
from ..grading.memory_declaration import MemoryDeclaration
from ..harness import Harness
from ..suite.memory_system import CONTROL, MemorySystem
from .suite_run import SuiteRun

__all__ = ["arm_memory", "grading_memory", "view_memory"]


def arm_memory(
    base: MemoryDeclaration, systems: Sequence[MemorySystem], harness: Harness, hooks: bool = True
) -> MemoryDeclaration:
    """``base`` (what the fixture and challenge say) with the channels ``systems`` install under ``harness``: their
    MCP servers, the first one's hooks (``hooks``), where their state is mounted and the instructions file it is
    mounted as."""
    servers = tuple(sorted({server for system in systems for server in system.tool_servers}))
    installed = installed_hooks(harness, systems[0].attachment) if hooks and systems else ()
    state = tuple(sorted({mount.target for system in systems for mount in system.attachment.mounts}))
    static = tuple(path for path in state if path == str(container_path(harness.instructions_path)))
    update = {"tool_servers": servers, "hooks": installed, "state_paths": state, "static_files": static}
    return base.model_copy(update=update)


def _memory(run: SuiteRun, challenge: str, systems: Sequence[MemorySystem], hooks: bool) -> MemoryDeclaration:
    return arm_memory(run.suite.memory(challenge), systems, run.harness, hooks)


def grading_memory(run: SuiteRun, challenge: str, condition: str) -> MemoryDeclaration:
    """What grading looks for in one arm: the channels its attachment installed. The control has none, so nothing
    reaching it counts as memory, and any channel that shows there anyway (a server, a file, a hook of the agent's
    own making) is one its attachment did not install (:func:`bench.grading.delivery.foreign_channels`)."""
    systems = () if condition == CONTROL else tuple(system for system in run.systems if system.name == condition)
    return _memory(run, challenge, systems, hooks=True)


def view_memory(run: SuiteRun, challenge: str) -> MemoryDeclaration:
    """What an attempt's page shows of every arm: the phrases, and every system's tools and files."""
    return _memory(run, challenge, run.systems, hooks=False)
