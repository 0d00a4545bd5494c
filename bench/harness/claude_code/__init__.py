"""Claude Code (npm ``@anthropic-ai/claude-code``) as a harness: every fact about the CLI the bench relies on.

``cli`` its command line, environment and files; ``config`` a neutral attachment as its user-level configuration;
``session`` its session JSONL as the common transcript; ``injection`` how it marks injected context in a request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any, ClassVar

from ...contracts import ApiDialect
from ..base import (
    AttachmentRequest,
    ConfigFile,
    CredentialPattern,
    Harness,
    HookSpec,
    HookTool,
    ImageRecipe,
    InjectionFormat,
    MemoryChannel,
    RenderedConfig,
)
from ..transcript import Transcript
from . import config
from .cli import AGENT_KEY, HOME_DIRS, USER_MEMORY_PATH, agent_env, claude_argv, session_file, session_id_of
from .injection import ClaudeInjection
from .session_log import HARNESS, parse_claude_session

__all__ = ["CLI_VERSION", "ClaudeCode"]

CLI_VERSION = "2.1.332"  # the version whose interfaces agent-interfaces.md records
# The npm package is a thin wrapper whose per-platform optional dependency carries a self-contained glibc
# executable, so the image needs no Node.js: the platform package's binary is copied in.
_RECIPE = ImageRecipe(
    package="@anthropic-ai/claude-code-linux-x64",
    version=CLI_VERSION,
    binary="package/claude",
    command="claude",
    install_path="/usr/local/bin/claude",
)


class ClaudeCode(Harness):
    name: ClassVar[str] = HARNESS
    display_name: ClassVar[str] = "Claude Code"
    dialect: ClassVar[ApiDialect] = ApiDialect.ANTHROPIC_MESSAGES
    capabilities: ClassVar[frozenset[MemoryChannel]] = frozenset(MemoryChannel)
    agent_key: ClassVar[str] = AGENT_KEY
    hook_passed_env: ClassVar[tuple[str, ...]] = (config.HOOK_PASSED,)
    credential_patterns: ClassVar[tuple[CredentialPattern, ...]] = (
        CredentialPattern(label="Anthropic API key", pattern=r"sk-ant-[A-Za-z0-9_-]{16,}"),
    )
    injection: InjectionFormat = ClaudeInjection()
    subagent_tools: ClassVar[frozenset[str]] = frozenset({"Agent", "Task"})  # CLI 2.1.197 calls it Agent
    native_settings: ClassVar[bool] = True  # ~/.claude/settings.json, as the older declarations give it
    hook_tools: ClassVar[Mapping[HookTool, tuple[str, ...]]] = {
        HookTool.READ: ("Read",),
        HookTool.EDIT: ("Edit", "MultiEdit"),
        HookTool.WRITE: ("Write",),
        HookTool.SHELL: ("Bash",),
    }

    def image_recipe(self) -> ImageRecipe:
        return _RECIPE

    @property
    def home(self) -> tuple[PurePosixPath, ...]:
        return HOME_DIRS

    def argv(self, prompt: str, model: str, resume: str | None = None) -> tuple[str, ...]:
        return claude_argv(prompt, model, resume)

    def session_id_of(self, output: bytes) -> str | None:
        return session_id_of(output)

    def session_file(self, session_id: str, cwd: str) -> PurePosixPath:
        return session_file(session_id, cwd)

    def environment(self, base_url: str) -> dict[str, str]:
        return agent_env(base_url)

    def render(self, request: AttachmentRequest) -> RenderedConfig:
        return config.render(self.resolved(request))

    def managed_files(self, builtin_memory: bool) -> tuple[ConfigFile, ...]:
        return config.managed_files(builtin_memory)

    @property
    def instructions_path(self) -> PurePosixPath:
        return USER_MEMORY_PATH

    def parse_session(self, session: bytes, outputs: Sequence[bytes] = ()) -> Transcript:
        return parse_claude_session(session, outputs)

    def installed_hooks(self, request: AttachmentRequest) -> tuple[HookSpec, ...]:
        return config.settings_hooks(request.native_settings) + self.resolved(request).hooks

    def ran_input(self, tool: str, given: Any, cwd: str) -> Any:
        """A Bash call's command loses one leading ``cd <cwd> && `` when ``<cwd>`` is the session's working
        directory, written exactly so (``cd "/workspace" && ``, ``cd /workspace/ && `` and ``cd /workspace; `` are
        kept; measured on CLI 2.1.197)."""
        prefix = f"cd {cwd} && "
        if tool == "Bash" and isinstance(given, dict) and str(given.get("command", "")).startswith(prefix):
            return {**given, "command": str(given["command"])[len(prefix) :]}
        return given

    def builtin_memory(self, request: AttachmentRequest) -> bool:
        return config.builtin_memory(request)
