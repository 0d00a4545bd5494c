"""The Docker engine through the ``docker`` SDK: the client, the one error translation, containers and the sweep.

Engine and HTTP errors become :class:`SandboxError` here, in :func:`engine_errors`, once; the other modules of this
package call the engine inside it. Every container and network made here carries the runner's lease labels
(:mod:`..lease`); labels are engine metadata, invisible from inside a container (a test checks). Each is made
through :func:`created`, which removes it on every way out, a stop signal's included.

The SDK is untyped: its objects stay inside this package, typed as ``Any`` where they cross a function boundary.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from types import TracebackType
from typing import Any, TypeVar

import docker  # type: ignore[import-untyped]
import docker.errors  # type: ignore[import-untyped]
import requests.exceptions
from docker.types import LogConfig, Mount  # type: ignore[import-untyped]

from ....contracts import Digest
from ....errors import SandboxError
from ....stopping import stop_deferred
from ....store import Store, tree_from_tar
from ...layout import USER_GID, USER_UID, WORKSPACE
from ...spec import ContainerSpec
from ...tarpipe import chunk_stream, tree_chunks
from ..base import SweepReport
from ..lease import OWNER_LABEL, Lease, Standing

__all__ = [
    "NO_HOST_ADDRESS",
    "create_container",
    "created",
    "docker_client",
    "engine_errors",
    "put_workspace",
    "read_output",
    "read_workspace",
    "remove_container",
    "remove_network",
    "sweep",
    "wait",
]

# A model-only network gets no host address on its bridge: on Docker 20.10 a plain internal network still does,
# and a container on it reached every host service listening on all addresses (measured, tests/agent).
NO_HOST_ADDRESS = {"com.docker.network.bridge.inhibit_ipv4": "true"}
ENGINE_TIMEOUT = 600
NETWORK_REMOVALS = 5  # a network's removal tried this often while endpoints linger (about 2.5 s in all)
R = TypeVar("R")
Container = Any  # docker.models.containers.Container
Client = Any  # docker.DockerClient


class EngineErrors:
    """A ``with`` block whose engine and connection errors leave it as one :class:`SandboxError` naming the task.

    A class rather than a generator context manager so that type checkers know it never swallows an exception.
    """

    def __init__(self, what: str) -> None:
        self.what = what

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if isinstance(error, docker.errors.APIError):
            raise SandboxError(f"the engine failed {self.what}: {error.explanation}") from error
        if isinstance(error, docker.errors.DockerException | requests.exceptions.RequestException):
            raise SandboxError(
                f"the engine failed {self.what}: {error}; is it running? (`scripts/ensure-docker.sh`)"
            ) from error


def engine_errors(what: str) -> EngineErrors:
    """Translate whatever the engine or its connection raises while doing ``what`` into a :class:`SandboxError`."""
    return EngineErrors(what)


def docker_client() -> Client:
    """A client for the local engine; the error says how to start one."""
    try:
        client = docker.from_env(timeout=ENGINE_TIMEOUT)
        client.ping()
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise SandboxError(f"no Docker engine answers ({exc}); run `scripts/ensure-docker.sh` to start one") from exc
    return client


@contextmanager
def created(make: Callable[[], R], remove: Callable[[R], None]) -> Iterator[R]:
    """What ``make()`` makes on the engine, removed on every way out. A stop signal that arrives while the engine
    makes it takes effect once it is made and held here (:mod:`bench.stopping`), so it is removed too."""
    held: list[R] = []
    try:
        with stop_deferred():
            held.append(make())
        yield held[0]
    finally:
        if held:
            remove(held[0])


def create_container(client: Client, spec: ContainerSpec, network: str, labels: Mapping[str, str]) -> Container:
    """Create (not start) the container ``spec`` describes: limits, no capabilities, the lease labels."""
    mounts = [Mount(m.target, m.bound, type="bind", read_only=m.read_only) for m in spec.effective_mounts()]
    limits = spec.limits
    image = spec.effective_image()
    with engine_errors(f"creating a container from {image}"):
        try:
            return client.containers.create(
                image=image,
                command=list(spec.command),
                user=spec.user,
                environment=spec.effective_env(),
                hostname=spec.hostname,
                working_dir=spec.workdir,
                mounts=mounts,
                network=network,
                nano_cpus=int(limits.cpus * 1e9),
                mem_limit=f"{limits.memory_mb}m",
                memswap_limit=f"{limits.memory_mb}m",
                pids_limit=limits.pids,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                labels=dict(labels),
                log_config=LogConfig(type=LogConfig.types.JSON, config={"max-size": "16m", "max-file": "1"}),
            )
        except docker.errors.ImageNotFound as exc:
            raise SandboxError(
                f"image {image} is not in the local engine; build it with `stele-bench image build NAME`"
            ) from exc


def put_workspace(container: Container, store: Store, workspace: Digest) -> None:
    """Stream ``workspace`` into the (created) container, owned by the agent user."""
    chunks = tree_chunks(store, workspace, prefix=WORKSPACE.lstrip("/"), uid=USER_UID, gid=USER_GID)
    with engine_errors("copying the workspace in"):
        container.put_archive("/", chunks)


def read_workspace(container: Container, store: Store) -> Digest:
    """The container's workspace, hashed into the store while it streams out."""
    with engine_errors("copying the workspace out"):
        chunks, _ = container.get_archive(WORKSPACE)
        return tree_from_tar(store, chunk_stream(chunks), strip=WORKSPACE.rsplit("/", 1)[-1])


def wait(container: Container, timeout: float) -> tuple[bool, int | None]:
    """Wait for the container to exit; past ``timeout`` kill it. Returns (timed out, exit code)."""
    try:
        result = container.wait(timeout=timeout)
        return False, int(result["StatusCode"])
    except requests.exceptions.RequestException:
        with engine_errors("killing the container past its deadline"):
            container.kill()
            container.wait(timeout=ENGINE_TIMEOUT)
        return True, None


def read_output(container: Container, limit: int) -> tuple[str, int]:
    """The container's combined output, at most ``limit`` bytes kept, and how many it printed in all."""
    kept, printed = bytearray(), 0
    with engine_errors("reading the container's output"):
        for chunk in container.logs(stdout=True, stderr=True, stream=True):
            printed += len(chunk)
            kept += chunk[: max(0, limit - len(kept))]
    return kept.decode("utf-8", "replace"), printed


def remove_container(container: Container) -> None:
    with engine_errors(f"removing container {container.short_id}"), suppress(docker.errors.NotFound):
        try:
            container.remove(force=True, v=True)  # already gone: removal is what we wanted
        except docker.errors.APIError as error:
            # Two sweeps (two cluster nodes on one engine) may remove one dead runner's container at once.
            if error.status_code != 409 or "already in progress" not in str(error.explanation):
                raise


def remove_network(network: Any) -> None:
    with engine_errors(f"removing network {network.name}"), suppress(docker.errors.NotFound):
        for attempt in range(NETWORK_REMOVALS):
            try:
                network.remove()
                return
            except docker.errors.APIError as error:
                # A container still attached (its own removal cut short by a stop, or still under way in another
                # thread when a stop began) keeps the network: detach what is listed, and try again while the
                # engine finishes removing what is not listed yet (the soak met one such endpoint in 20 kills).
                if "active endpoints" not in str(error.explanation) or attempt == NETWORK_REMOVALS - 1:
                    raise
                network.reload()
                for attached in network.attrs.get("Containers") or {}:
                    with suppress(docker.errors.NotFound, docker.errors.APIError):
                        network.disconnect(attached, force=True)
                time.sleep(0.25 * attempt)


def sweep(client: Client, lease: Lease) -> SweepReport:
    """Remove every container and network whose lease is dead; count the live and the unjudgeable ones."""
    counts = {standing: 0 for standing in Standing}
    dead: list[Mapping[str, str]] = []
    owned = {"label": OWNER_LABEL}
    with engine_errors("sweeping dead runners' containers and networks"):
        # Sparse: a full listing inspects each container after listing it, and one removed in between (by its own
        # runner, or a parallel sweep) failed the whole sweep with "No such container".
        for container in client.containers.list(all=True, filters=owned, sparse=True):
            labels = container.attrs.get("Labels") or {}
            standing = lease.standing(labels)
            counts[standing] += 1
            if standing is Standing.DEAD:
                remove_container(container)
                dead.append(labels)
        for network in client.networks.list(filters=owned):
            labels = network.attrs.get("Labels") or {}
            standing = lease.standing(labels)
            counts[standing] += 1
            if standing is Standing.DEAD:
                remove_network(network)
                dead.append(labels)
    for labels in dead:
        lease.bury(labels)
    lease.prune()
    live = counts[Standing.LIVE] + counts[Standing.OWN]
    return SweepReport(removed=counts[Standing.DEAD], live=live, foreign=counts[Standing.FOREIGN])
