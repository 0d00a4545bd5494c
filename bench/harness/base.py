"""What a harness is: the contract every coding-agent CLI the bench can run implements.

A harness is a replaceable part like a store or a sandbox backend: one package under ``bench/harness/<name>/``
implementing :class:`Harness`, registered by name in :mod:`bench.harness`. Everything the runner, the grader, the
image builder and publication need to know about one agent CLI is asked of it here, so nothing outside
``bench/harness/`` names a harness's files, formats or environment variables:

- identity: :attr:`Harness.name` (as suites, keys and transcripts name it) and :attr:`Harness.version`;
- :meth:`Harness.image_recipe`: the npm package the image is built from and the binary it installs;
- :meth:`Harness.argv` for a fresh step and a resumed one (resumed by the session id :meth:`Harness.session_id_of`
  read from the step's output), :meth:`Harness.environment`, :attr:`Harness.home` (the directories the runner
  creates, agent-owned) and :meth:`Harness.session_file` (where the session lands, read back after the arm);
- :meth:`Harness.render`: a harness-neutral :class:`AttachmentRequest` (instructions file, MCP servers, hooks per
  event, the harness's own memory) as the configuration files the runner writes and mounts read-only in every
  arm (:class:`RenderedConfig`, path -> bytes), and the channels the harness offers (:attr:`Harness.capabilities`),
  so a memory system needing one it lacks is refused at plan time (:func:`require_channels`);
- :meth:`Harness.parse_session`: its session file (and each step's output) as the common
  :class:`~bench.harness.transcript.Transcript`;
- :class:`InjectionFormat`: how the harness marks the context it injects into a request (hook context, a file it
  loaded), so grading reads delivery from the gateway's record without knowing the harness;
- :attr:`Harness.credential_patterns` (publication's leak check) and :attr:`Harness.dialect`
  (:class:`~bench.contracts.ApiDialect`, the gateway dialect it speaks).

Only :mod:`bench.contracts`, :mod:`bench.errors`, pydantic and the standard library are imported here, so every
other layer (gateway, agent, grading, sandbox, publish) may import the harness layer.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from enum import StrEnum
from pathlib import PurePosixPath
from typing import Annotated, Any, ClassVar

from pydantic import Field, StringConstraints

from ..contracts import ApiDialect, ContractModel
from ..errors import ContractError
from .transcript import Channel, Transcript

__all__ = [
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
    "require_channels",
    "require_native_settings",
]

HarnessName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,31}$")]


class MemoryChannel(StrEnum):
    """A way a memory system can reach the agent through its harness (what an attachment may ask for)."""

    INSTRUCTIONS_FILE = "instructions-file"  # a user-level file the harness loads into every session by itself
    MCP_SERVERS = "mcp-servers"  # stdio MCP servers the harness starts, their tools offered to the model
    HOOKS = "hooks"  # commands the harness runs on its events, their output added to the context
    SKILLS = "skills"  # user-level skill directories the harness lists for the model
    BUILTIN_MEMORY = "builtin-memory"  # the harness's own memory feature (off in every arm unless declared)


class HookEvent(StrEnum):
    """A harness event a hook runs on, by the names the hook protocols share."""

    SESSION_START = "SessionStart"
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    PRE_TOOL_USE = "PreToolUse"
    POST_TOOL_USE = "PostToolUse"
    STOP = "Stop"


class HookTool(StrEnum):
    """A kind of tool a hook picks, in words each harness renders as its own tool names (:attr:`Harness.hook_tools`)."""

    READ = "read"  # reading a file
    EDIT = "edit"  # changing part of a file
    WRITE = "write"  # writing a whole file
    SHELL = "shell"  # running a command


class HookSpec(ContractModel):
    """One hook as a memory system declares it; :meth:`Harness.render` seals its command (:mod:`.sealing`).
    ``tools`` picks the tools of a tool event in neutral words; :meth:`Harness.resolved` renders them as the
    harness's ``matcher``."""

    event: HookEvent | str  # a harness may know more events than the shared ones
    matcher: str | None = None  # a tool-name pattern for tool events; None: every tool
    tools: tuple[HookTool, ...] = ()
    command: Annotated[str, StringConstraints(min_length=1)]
    timeout_seconds: int | None = Field(default=None, gt=0)


class McpServerSpec(ContractModel):
    """One stdio MCP server as a memory system declares it; :meth:`Harness.render` seals it (:mod:`.sealing`)."""

    name: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_-]{0,31}$")]
    command: Annotated[str, StringConstraints(min_length=1)]
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)


class AttachmentRequest(ContractModel):
    """An arm's memory channels in harness-neutral terms: what :meth:`Harness.render` turns into files.

    The control arm's request is the empty one; every arm gets the same files with the same shape.
    ``instructions`` is the user-level instructions file's text (empty: the file exists, empty); a memory system
    that mounts its state as that file takes the path instead (the runner leaves the file out).
    ``native_settings`` is a declaration in a harness's own settings format (only that harness accepts it).
    ``base_env`` is the container's base environment, the only one a sealed server or hook starts with besides
    its declared one; ``base_url`` the model endpoint every arm is given (a harness may need it in a file).
    """

    base_env: dict[str, str]
    base_url: str
    instructions: bytes = b""
    mcp_servers: tuple[McpServerSpec, ...] = ()
    hooks: tuple[HookSpec, ...] = ()
    builtin_memory: bool = False
    native_settings: dict[str, Any] | None = None

    @property
    def channels(self) -> frozenset[MemoryChannel]:
        """The channels this request uses (an instructions file is every arm's; a mount of state there is not)."""
        used = {MemoryChannel.MCP_SERVERS} if self.mcp_servers else set()
        used |= {MemoryChannel.HOOKS} if self.hooks else set()
        used |= {MemoryChannel.BUILTIN_MEMORY} if self.builtin_memory else set()
        used |= {MemoryChannel.INSTRUCTIONS_FILE} if self.instructions else set()
        return frozenset(used)


class ConfigFile(ContractModel):
    """A runner-owned configuration file (or, with ``directory``, an empty directory) at a container path.

    ``target`` is relative to the agent user's home, or absolute for a system path; ``name`` is the file's own
    name, as a record names what the runner wrote (with its content's digest)."""

    name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
    target: PurePosixPath
    content: bytes = b""
    directory: bool = False


class RenderedConfig(ContractModel):
    """Every configuration file of an arm, runner-owned and mounted read-only; the same shape in every arm."""

    files: tuple[ConfigFile, ...]

    def by_target(self) -> dict[PurePosixPath, ConfigFile]:
        return {file.target: file for file in self.files}


class ImageRecipe(ContractModel):
    """How the agent image gets the harness: an npm package, pinned, and the binary it ships."""

    package: str  # the npm package holding the binary (a platform package where the CLI ships one)
    version: Annotated[str, StringConstraints(pattern=r"^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$")]
    binary: str  # the binary's path inside the package tarball (``package/...``)
    command: str  # the name it is installed as, on PATH
    install_path: str  # where in the image


class ClientCall(ContractModel):
    """A tool call as the harness's client runs it: ``arguments`` an object, or the text of a freeform tool."""

    name: str
    namespace: str | None = None
    arguments: Any


class CredentialPattern(ContractModel):
    """A secret the harness's provider issues, as publication refuses it."""

    label: str
    pattern: str  # a regular expression over bytes (ASCII)

    def compiled(self) -> re.Pattern[bytes]:
        return re.compile(self.pattern.encode())


class InjectedBlock(ContractModel):
    """Hook context the harness placed into a request: the hook as the harness names it, and its text."""

    hook: str
    text: str


class LoadedFile(ContractModel):
    """A file the harness loaded into a request by itself: its path and contents."""

    path: str
    text: str


class InjectionFormat(ABC):
    """How a harness marks the context it injects into a request's user-side text, read by grading from the gateway's
    record (the agent cannot write there); every method reads one text (a text block, or a tool result's content).

    ``marked`` False: the harness puts hook context into a request as an item of its own holding the bare text (Codex's
    developer messages), known only by the item's role and place, so no text here is a hook block and a tool's
    output has nothing appended; grading reads such context by its place (:meth:`placed_hook`)."""

    marked: ClassVar[bool] = True

    @abstractmethod
    def is_harness_text(self, text: str) -> bool:
        """Whether a user-side text block is the harness's own (a notice, injected context), not the user's prompt."""

    @abstractmethod
    def hook_block(self, text: str) -> InjectedBlock | None:
        """The hook context ``text`` (a whole text block, or one block after a tool's output) carries, if any."""

    @abstractmethod
    def split_tool_output(self, text: str) -> tuple[str, tuple[str, ...]]:
        """A tool result's content as the tool's own output and the harness's blocks appended after it, in order."""

    @abstractmethod
    def loaded_files(self, text: str) -> tuple[LoadedFile, ...]:
        """The files the harness loaded by itself, as a harness text block carries them."""

    @abstractmethod
    def hook_channel(self, hook: str) -> Channel:
        """The channel of context from ``hook`` (a hook's name as the harness reports it)."""

    @abstractmethod
    def tool_hook(self, hook: str, tool: str) -> bool:
        """Whether context of ``hook`` placed after a result of ``tool`` is that call's own (its post-tool hook)."""

    def placed_hook(self, text: str, trigger: str | None, after_prompt: bool) -> InjectedBlock | None:
        """The hook context an instruction the harness placed among the turns carries (an unmarked harness's hook
        context), read by its place: ``trigger`` the tool (as the model named it) of the newest call still awaiting
        its result, else ``after_prompt`` whether it follows the user's prompt. A marked harness places none."""
        return None


class Harness(ABC):
    """One coding-agent CLI. Implementations are stateless; :func:`bench.harness.harness_named` returns one."""

    name: ClassVar[str]  # as suites, comparability keys and transcripts name it
    display_name: ClassVar[str]  # as reports name it, with its version
    dialect: ClassVar[ApiDialect]
    capabilities: ClassVar[frozenset[MemoryChannel]]
    agent_key: ClassVar[str]  # the stand-in key every arm presents to its gateway (identical in every arm)
    # Variables of the harness's own that a sealed hook keeps (its hook protocol documents them)
    hook_passed_env: ClassVar[tuple[str, ...]] = ()
    injection: InjectionFormat
    credential_patterns: ClassVar[tuple[CredentialPattern, ...]]
    # The harness's tools that start a sub-agent with a prompt of the model's own (its conversation is the
    # harness's, never the memory's channel)
    subagent_tools: ClassVar[frozenset[str]] = frozenset()
    # Whether a declaration's ``settings`` (the older form: a settings file in this harness's own format) is read
    native_settings: ClassVar[bool] = False
    # Its tool names for each neutral tool kind a hook picks (:class:`HookTool`), as its hook matchers name them
    hook_tools: ClassVar[Mapping[HookTool, tuple[str, ...]]]
    # Regular expressions of its own texts that read as a host path but name none (bench/leaks.py passes over them)
    path_lookalikes: ClassVar[tuple[str, ...]] = ()
    # The recipe label of its agent image; the default harness's keeps the one it had before harnesses were named
    image_label: ClassVar[str] = "agent"

    @property
    def version(self) -> str:
        """The CLI version the image pins."""
        return self.image_recipe().version

    @property
    def label(self) -> str:
        """How reports name the harness: its display name and version."""
        return f"{self.display_name} {self.version}"

    @abstractmethod
    def image_recipe(self) -> ImageRecipe: ...

    @property
    @abstractmethod
    def home(self) -> tuple[PurePosixPath, ...]:
        """Directories the runner creates agent-owned before the container starts (sessions are written there)."""

    @abstractmethod
    def argv(self, prompt: str, model: str, resume: str | None = None) -> tuple[str, ...]:
        """The command of one step: fresh (``resume`` None) or resuming the session of that id."""

    @abstractmethod
    def session_id_of(self, output: bytes) -> str | None:
        """The session (thread) id a step's standard output names; None when it names none."""

    @abstractmethod
    def session_file(self, session_id: str, cwd: str) -> PurePosixPath:
        """Where the session of ``session_id`` run in ``cwd`` is written inside the container (relative to the home).
        It may hold ``*`` wildcards where the harness names the file by more than the id (a start time): the runner
        reads the one file that matches, and none when several do."""

    @abstractmethod
    def environment(self, base_url: str) -> dict[str, str]:
        """The environment every arm adds: the model endpoint at ``base_url`` and :attr:`agent_key`, and the
        switches that keep the harness quiet and deterministic."""

    @abstractmethod
    def render(self, request: AttachmentRequest) -> RenderedConfig:
        """The arm's configuration files; deterministic, and the same set of targets whatever ``request`` holds
        (only the contents differ)."""

    @abstractmethod
    def managed_files(self, builtin_memory: bool) -> tuple[ConfigFile, ...]:
        """The harness's system-wide (managed) configuration, outranking the user's, which an agent cannot undo:
        every arm gets the ``builtin_memory=False`` one; a system declaring the harness's own memory gets the other
        in its arm alone. Empty when the harness has no such layer."""

    @property
    @abstractmethod
    def instructions_path(self) -> PurePosixPath:
        """The user-level instructions file the harness loads by itself (the static-context channel)."""

    @abstractmethod
    def parse_session(self, session: bytes, outputs: Sequence[bytes] = ()) -> Transcript:
        """The common transcript of a session file; ``outputs`` are its steps' standard outputs, in order."""

    # Whether the gateway must ask this harness about its client (:meth:`client_call`, :meth:`offered_tools`,
    # :meth:`is_compaction`): False when the policy's tool names are its client's own (the gateway then asks nothing
    # and its records keep their bytes).
    adapts_policy: ClassVar[bool] = False

    def client_call(self, name: str, arguments: Any) -> ClientCall:
        """The call the harness's client runs for the policy's tool call ``name`` with ``arguments``."""
        return ClientCall(name=name, arguments=arguments)

    def offered_tools(self, defined: frozenset[str], system: Sequence[str]) -> frozenset[str]:
        """The policy's tool names a request offers beyond those it defines (``defined``) or announces by those
        names, given its system texts."""
        return frozenset()

    def is_compaction(self, headers: Mapping[str, str]) -> bool:
        """Whether a request (its headers, lower-case) is the client compacting its context, not agent work."""
        return False

    def installed_hooks(self, request: AttachmentRequest) -> tuple[HookSpec, ...]:
        """The hooks the runner installs for ``request`` (grading counts only their context as injected)."""
        return self.resolved(request).hooks

    def resolved(self, request: AttachmentRequest) -> AttachmentRequest:
        """``request`` with each hook's neutral ``tools`` rendered as this harness's ``matcher`` (its tool names, each
        once, in :attr:`hook_tools` order), as :meth:`render` writes them."""

        def matcher(tools: Collection[HookTool]) -> str:
            return "|".join(dict.fromkeys(name for kind in HookTool if kind in tools for name in self.hook_tools[kind]))

        hooks = tuple(
            h.model_copy(update={"matcher": matcher(h.tools), "tools": ()}) if h.tools else h for h in request.hooks
        )
        return request.model_copy(update={"hooks": hooks})

    def require_renderable(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        """Refuse a policy's tool calls (name and input, as the policy writes them) this harness's client cannot
        run; by default every call runs as written (the policy's tool names are the client's own)."""
        return None

    def ran_input(self, tool: str, given: Any, cwd: str) -> Any:
        """A tool call's input as the harness runs and repeats it, from the input the model gave (its own
        normalizations; defaults aside). By default, as given."""
        return given

    def builtin_memory(self, request: AttachmentRequest) -> bool:
        """Whether ``request`` turns the harness's own memory on (:meth:`managed_files` then differs)."""
        return request.builtin_memory


def require_native_settings(harness: Harness, declared: bool, who: str) -> None:
    """Refuse ``who`` declaring ``settings`` in a harness's own format under a harness that does not read them."""
    if declared and not harness.native_settings:
        raise ContractError(
            f"{who} declares `settings`, a settings file in another harness's format, which harness "
            f"{harness.name!r} does not read; declare its hooks per event in `hooks` instead",
            field="settings",
        )


def require_channels(harness: Harness, needed: Collection[MemoryChannel], who: str) -> None:
    """Refuse ``who`` (a memory system) whose attachment needs a channel ``harness`` does not offer, naming it."""
    missing = sorted(set(needed) - harness.capabilities)
    if missing:
        raise ContractError(
            f"{who} needs the {', '.join(missing)} channel, which harness {harness.name!r} does not offer "
            f"(it offers {', '.join(sorted(harness.capabilities))}); run it under another harness or drop it",
            field="harness",
            expected=[str(channel) for channel in missing],
            actual=sorted(str(channel) for channel in harness.capabilities),
        )
