"""The sandbox backend interface: everything the runner asks of a container engine, and nothing else.

A backend owns images, one-shot runs, exec sessions, the model-only network arrangement and the sweep of what a
dead runner left. Workspaces cross the boundary only as tar streams: built from a store tree on the way in, hashed
back into a tree as they stream out, never written to a host checkout. Each implementation translates its engine's
errors into :class:`~bench.errors.SandboxError` once, at this boundary (``raise ... from exc``): nothing above this
interface sees an engine type or exception.

Implementations: :mod:`.docker` (a local Docker engine; every capability) and :mod:`.process` (plain processes in a
temporary root; see its :data:`~.process.ProcessBackend.capabilities`). A backend declares what it can do as
:class:`Capability` values: an image or network mode it lacks is refused with a :class:`SandboxError` naming the
capability, never done some other way; a backend without ``LIMITS`` runs specs without enforcing their limits, so
nothing that needs them (an agent arm) may run on it.

How a process ended is one enum, :class:`ProcessOutcome`, decided by one function, :func:`process_outcome`, from
whether its deadline passed and its exit code. Every runner step (prebuild, verifier, oracle, agent step) reads it.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import Any, BinaryIO, ClassVar, NoReturn, final

from ...contracts import ContractModel, Digest
from ...errors import SandboxError
from ...store import Store
from ..spec import ContainerSpec, NetworkMode, check_neutral
from .lease import Lease

__all__ = [
    "IDLE_COMMAND",
    "OUTPUT_LIMIT",
    "STDERR_LIMIT",
    "Capability",
    "ExecResult",
    "ImageInfo",
    "ImageSource",
    "ModelNetwork",
    "ProcessOutcome",
    "RunOutcome",
    "RunRequest",
    "SandboxBackend",
    "Session",
    "SweepReport",
    "process_outcome",
]

# Bytes of combined stdout/stderr kept from one run; the rest is counted, not stored.
OUTPUT_LIMIT = 64 * 1024
# Bytes of stderr kept from one exec (its stdout is kept whole: the agent's machine-readable output is a record).
STDERR_LIMIT = 64 * 1024
# What a session's spec runs while it waits for execs.
IDLE_COMMAND = ("sleep", "infinity")


class ProcessOutcome(enum.StrEnum):
    """How a process in a sandbox ended: the one vocabulary of every container and exec result."""

    SUCCEEDED = "succeeded"  # exited 0 before its deadline
    FAILED = "failed"  # exited non-zero (137: SIGKILL, for example from the OOM killer)
    TIMED_OUT = "timed-out"  # killed at its deadline


def process_outcome(timed_out: bool, exit_code: int | None) -> ProcessOutcome:
    """The one mapping from (deadline passed, exit code) to :class:`ProcessOutcome`."""
    if timed_out:
        return ProcessOutcome.TIMED_OUT
    return ProcessOutcome.SUCCEEDED if exit_code == 0 else ProcessOutcome.FAILED


class Capability(enum.StrEnum):
    """What a backend can do beyond running a command over a workspace; the contract tests check each claim."""

    IMAGES = "images"  # look up, import and build images; spec.image_id selects the root filesystem
    LIMITS = "limits"  # spec.limits (cpus, memory, pids) are enforced
    NETWORK_NONE = "network-none"  # only loopback inside
    NETWORK_PUBLIC = "network-public"  # a route out
    NETWORK_MODEL_ONLY = "network-model-only"  # only a relay to the runner's gateway (model_network)


NETWORK_CAPABILITY = {
    NetworkMode.NONE: Capability.NETWORK_NONE,
    NetworkMode.PUBLIC: Capability.NETWORK_PUBLIC,
    NetworkMode.MODEL_ONLY: Capability.NETWORK_MODEL_ONLY,
}


class RunRequest(ContractModel):
    spec: ContainerSpec
    workspace: Digest | None  # the tree placed at the workspace path before start; None leaves it empty
    timeout_seconds: float
    read_back: bool = True  # stream the workspace back out into a tree after the command ends
    output_limit: int = OUTPUT_LIMIT


class RunOutcome(ContractModel):
    timed_out: bool  # killed at the deadline
    exit_code: int | None  # None when timed out
    output: str  # combined stdout and stderr, at most output_limit bytes, decoded with replacement
    output_bytes: int  # how many bytes the command printed in all
    seconds: float
    tree: Digest | None  # the workspace as it was when the command ended

    @property
    def outcome(self) -> ProcessOutcome:
        return process_outcome(self.timed_out, self.exit_code)


@dataclass(frozen=True)
class ExecResult:
    """One command run in a session."""

    timed_out: bool  # the session was killed at the deadline (or before this command started)
    exit_code: int | None
    stdout: bytes  # whole
    stderr: str  # at most STDERR_LIMIT bytes, decoded with replacement
    seconds: float

    @property
    def outcome(self) -> ProcessOutcome:
        return process_outcome(self.timed_out, self.exit_code)


@dataclass(frozen=True)
class ImageInfo:
    image_id: str
    labels: Mapping[str, str] = field(default_factory=dict)
    size: int = 0
    created: str = ""


@dataclass(frozen=True)
class SweepReport:
    removed: int  # containers, networks or roots of dead runners, removed
    live: int  # left alone: under a live lease, this runner's own included
    foreign: int  # left alone: made under no lease this sweep can judge (another machine, an older runner)


class ImageSource(ABC):
    """Where a backend finds an image its engine lacks: an archive of it, by image ID (the store, on a cluster)."""

    @abstractmethod
    def fetch(self, image_id: str, directory: Path) -> Path | None:
        """Write the archive of ``image_id`` into ``directory`` and return its path; None when there is none."""


class Session(ABC):
    """A started container (or its equivalent): several commands as the spec's user in one workspace.

    Made only by :meth:`SandboxBackend.session`, which removes it on every way out, Ctrl-C included. Past a deadline
    everything in it is killed; its files stay readable until the session ends.
    """

    spec: ContainerSpec

    @abstractmethod
    def exec(self, argv: tuple[str, ...], deadline: float) -> ExecResult:
        """Run ``argv`` as the spec's user in its workdir until it exits or ``deadline`` (monotonic) passes."""

    @abstractmethod
    def kill(self) -> None:
        """Stop every process in the session; later execs come back timed out without running."""

    @abstractmethod
    def read_file(self, path: PurePosixPath) -> bytes | None:
        """The bytes of one regular file at the absolute container ``path``, or None when there is none."""

    @abstractmethod
    def read_back(self) -> Digest:
        """The workspace as it is now, hashed into the store while it streams out."""


class ModelNetwork(ABC):
    """The model-only arrangement of one arm: an arm network whose one peer is a relay to the runner's gateway.

    The gateway (runner code) must listen on :attr:`host_address`, the only host address the relay can reach;
    then :meth:`start_relay` starts the relay, which answers as ``GATEWAY_ALIAS`` on ``RELAY_PORT``.
    """

    host_address: str

    @abstractmethod
    def start_relay(self, gateway_port: int) -> None:
        """Start the relay to ``host_address:gateway_port`` and wait until it listens."""


class SandboxBackend(ABC):
    """Runs the runner's containers; every container, network and root it makes is removed before it returns.

    ``store`` holds the workspace trees; a backend made without one serves images and sweeps only. ``lease`` names
    the runner: every resource is labelled with it, and :meth:`sweep` removes only resources of dead leases.

    :meth:`run` and :meth:`session` are template methods: each refuses a spec that is not neutral
    (:func:`~bench.sandbox.spec.check_neutral`) and only then calls the backend's hook (:meth:`_run`,
    :meth:`_session`), so no backend can start a container without the check; a subclass overriding either is
    refused when it is defined.
    """

    capabilities: ClassVar[frozenset[Capability]]
    _TEMPLATES: ClassVar[tuple[str, ...]] = ("run", "session")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        overridden = [name for name in cls._TEMPLATES if name in vars(cls)]
        if overridden:
            raise TypeError(
                f"{cls.__name__} overrides {', '.join(overridden)}: implement the hooks "
                f"({', '.join('_' + name for name in overridden)}) so the base checks neutrality first"
            )

    def __init__(self, store: Store | None, lease: Lease | None) -> None:
        self._store = store
        self.lease = lease or Lease.current()

    @property
    def store(self) -> Store:
        if self._store is None:
            raise SandboxError(
                f"this {type(self).__name__} was made without a store, so it cannot move workspaces; "
                "make it with the store the trees live in"
            )
        return self._store

    def require(self, capability: Capability, what: str) -> None:
        """Refuse ``what`` unless this backend declares ``capability``."""
        if capability not in self.capabilities:
            self.refuse(capability, what)

    def refuse(self, capability: Capability, what: str) -> NoReturn:
        raise SandboxError(
            f"{type(self).__name__} cannot do {what}: it lacks the {capability.value} capability "
            f"(it has {', '.join(sorted(self.capabilities)) or 'none'}); use a backend that has it"
        )

    def require_network(self, mode: NetworkMode) -> None:
        self.require(NETWORK_CAPABILITY[mode], f"network mode {mode.value}")

    # -- images ------------------------------------------------------------------------------------

    @abstractmethod
    def images(self, label: str) -> list[ImageInfo]:
        """Every local image carrying ``label`` (any value)."""

    @abstractmethod
    def image(self, image_id: str) -> ImageInfo:
        """The image pinned as ``image_id``; the error for a missing one names the build command."""

    @abstractmethod
    def import_image(self, rootfs: bytes | Path, *, tag: str, labels: Mapping[str, str], env: Mapping[str, str]) -> str:
        """Import a root filesystem tar as an image tagged ``tag`` (``repository:tag``); returns its ID.

        The image gets ``labels``, ``env`` and the workspace as its working directory.
        """

    @abstractmethod
    def build_image(self, context: Path, *, tag: str, labels: Mapping[str, str]) -> str:
        """Build a layer from the build-context tar file ``context`` (a Dockerfile and its files); returns its ID."""

    def save_image(self, image_id: str, target: Path) -> None:
        """Write an archive of ``image_id`` to ``target``: its layers and config, so a load keeps its ID."""
        self.refuse(Capability.IMAGES, f"saving image {image_id}")

    def export_image(self, image_id: str) -> AbstractContextManager[BinaryIO]:
        """The filesystem of ``image_id`` as a tar stream, readable while the block runs: what a container of it
        would see before its first process starts (no container of it is ever started)."""
        self.refuse(Capability.IMAGES, f"exporting the filesystem of image {image_id}")

    def load_image(self, archive: Path) -> list[str]:
        """Load an archive :meth:`save_image` wrote; returns the IDs of the images it held."""
        self.refuse(Capability.IMAGES, f"loading the image archive {archive}")

    # -- containers --------------------------------------------------------------------------------

    @final
    def run(self, request: RunRequest) -> RunOutcome:
        """Run ``request.spec``'s command to completion or its deadline and return what happened.

        Network modes ``none`` and ``public`` only: a model-only container runs in a :meth:`session` on a
        :meth:`model_network`. The spec must be neutral (:func:`~bench.sandbox.spec.check_neutral`).
        """
        check_neutral(request.spec)
        return self._run(request)

    @final
    def session(
        self,
        spec: ContainerSpec,
        workspace: Digest,
        home_dirs: tuple[PurePosixPath, ...] = (),
        network: ModelNetwork | None = None,
    ) -> AbstractContextManager[Session]:
        """Start ``spec`` idle with ``workspace`` (and ``home_dirs`` owned by its user) in place.

        A model-only spec needs ``network``; other modes refuse one. The spec must be neutral
        (:func:`~bench.sandbox.spec.check_neutral`): refused here, before the backend makes anything.
        """
        check_neutral(spec)
        return self._session(spec, workspace, home_dirs, network)

    @abstractmethod
    def _run(self, request: RunRequest) -> RunOutcome:
        """The backend's :meth:`run`, given a spec already checked neutral."""

    @abstractmethod
    def _session(
        self,
        spec: ContainerSpec,
        workspace: Digest,
        home_dirs: tuple[PurePosixPath, ...],
        network: ModelNetwork | None,
    ) -> AbstractContextManager[Session]:
        """The backend's :meth:`session`, given a spec already checked neutral."""

    @abstractmethod
    def model_network(self, relay_image: str) -> AbstractContextManager[ModelNetwork]:
        """Make one arm's model-only arrangement, its relay to run in ``relay_image``; removed on every way out."""

    @abstractmethod
    def sweep(self) -> SweepReport:
        """Remove what dead runners left (by their leases); never anything under a live lease."""

    @abstractmethod
    def close(self) -> None:
        """Release what this backend holds (an engine connection it opened); its lease stays with the process."""

    def __enter__(self) -> SandboxBackend:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
