"""OpenAI's Codex CLI (npm ``@openai/codex``, pinned) as a harness: every fact about the CLI the bench relies on,
each verified against the real CLI (docs/harnesses.md).

``image`` its image recipe; ``argv`` its command lines and environment; ``config`` a neutral attachment as its
``$CODEX_HOME`` files; ``rollout`` its session (rollout) file as the common transcript; ``injected`` and
``injection`` how its injected context is recognized in a request; ``actions`` the policy's calls named on its
tools and the tools its requests offer, for the gateway.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any, ClassVar

from ...contracts import ApiDialect
from ..base import (
    AttachmentRequest,
    ClientCall,
    ConfigFile,
    CredentialPattern,
    Harness,
    HookTool,
    ImageRecipe,
    InjectionFormat,
    MemoryChannel,
    RenderedConfig,
)
from ..transcript import Transcript
from . import config
from .actions import NATIVE_TOOLS, SHELL_HOOK_NAME, codex_call, is_compaction, offered, require_renderable
from .argv import AGENT_KEY, KEY_VARIABLE, agent_env, codex_argv, thread_id_of
from .injection import CodexInjection
from .recipe import CLI_VERSION, IMAGE_LABEL, IMAGE_RECIPE
from .rollout import HARNESS, parse_rollout

__all__ = ["CLI_VERSION", "Codex"]


class Codex(Harness):
    name: ClassVar[str] = HARNESS
    display_name: ClassVar[str] = "Codex CLI"
    dialect: ClassVar[ApiDialect] = ApiDialect.OPENAI_RESPONSES
    # No skills channel: the CLI lists user-level skills, but none is verified as a memory system's channel here;
    # its own memory (``features.memories``) stays off in every arm.
    capabilities: ClassVar[frozenset[MemoryChannel]] = frozenset(
        {MemoryChannel.INSTRUCTIONS_FILE, MemoryChannel.MCP_SERVERS, MemoryChannel.HOOKS}
    )
    agent_key: ClassVar[str] = AGENT_KEY
    credential_patterns: ClassVar[tuple[CredentialPattern, ...]] = (
        CredentialPattern(label="OpenAI project key", pattern=r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}"),
        # the provider's key variable set to anything but the stand-in key every arm presents
        CredentialPattern(label=f"{KEY_VARIABLE} value", pattern=KEY_VARIABLE + r"=(?!" + AGENT_KEY + r"\b)\S{8,}"),
    )
    injection: InjectionFormat = CodexInjection()
    subagent_tools: ClassVar[frozenset[str]] = frozenset({"spawn_agent"})
    adapts_policy: ClassVar[bool] = True  # the policy's Read, Write, Edit, Bash run as Codex's own tools
    # Hooks name a command ``Bash`` (a file is read with one too) and a patch ``apply_patch``
    hook_tools: ClassVar[Mapping[HookTool, tuple[str, ...]]] = {
        HookTool.READ: (SHELL_HOOK_NAME,),
        HookTool.EDIT: (NATIVE_TOOLS["Edit"],),
        HookTool.WRITE: (NATIVE_TOOLS["Write"],),
        HookTool.SHELL: (SHELL_HOOK_NAME,),
    }
    image_label: ClassVar[str] = IMAGE_LABEL
    # Its requests' turn-metadata header names the root agent "/root" (its agent hierarchy, no directory), and its
    # environment context closes the workspace roots with a </root> tag (docs/harnesses.md)
    path_lookalikes: ClassVar[tuple[str, ...]] = (r'agent_name\\?":\\?"/root\\?"', r"</root>")

    @property
    def version(self) -> str:
        return CLI_VERSION  # the recipe's is the platform package's (``<version>-linux-x64``)

    def image_recipe(self) -> ImageRecipe:
        return IMAGE_RECIPE

    @property
    def home(self) -> tuple[PurePosixPath, ...]:
        return (config.CODEX_HOME, config.CODEX_HOME / "sessions", config.SKILLS_DIR.parent)

    def argv(self, prompt: str, model: str, resume: str | None = None) -> tuple[str, ...]:
        return codex_argv(prompt, model, resume)

    def session_id_of(self, output: bytes) -> str | None:
        return thread_id_of(output)

    def session_file(self, session_id: str, cwd: str) -> PurePosixPath:
        # sessions/YYYY/MM/DD/rollout-<start time>-<thread id>.jsonl: the start time is the CLI's, so wildcards
        return config.CODEX_HOME / "sessions" / "*" / "*" / "*" / f"rollout-*-{session_id}.jsonl"

    def environment(self, base_url: str) -> dict[str, str]:
        return agent_env()  # the endpoint is in config.toml, rendered from the request's base_url

    def render(self, request: AttachmentRequest) -> RenderedConfig:
        return config.render(self.resolved(request))

    def managed_files(self, builtin_memory: bool) -> tuple[ConfigFile, ...]:
        return ()  # the user-level config.toml is runner-owned and read-only; it turns the CLI's memory off

    @property
    def instructions_path(self) -> PurePosixPath:
        return config.INSTRUCTIONS_PATH

    def parse_session(self, session: bytes, outputs: Sequence[bytes] = ()) -> Transcript:
        return parse_rollout(session, "the rollout file", outputs)

    def client_call(self, name: str, arguments: Any) -> ClientCall:
        if not isinstance(arguments, dict):  # a policy's tool input is an object; anything else is passed as is
            return ClientCall(name=name, arguments=arguments)
        return codex_call(name, arguments)

    def require_renderable(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        require_renderable(calls)

    def offered_tools(self, defined: frozenset[str], system: Sequence[str]) -> frozenset[str]:
        return offered(defined, system)

    def is_compaction(self, headers: Mapping[str, str]) -> bool:
        return is_compaction(headers)
