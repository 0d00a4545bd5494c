"""The sandbox backend on a local Docker engine, through the ``docker`` SDK.

Engine and HTTP errors are translated into :class:`SandboxError` here, once. Every container and network made
here carries :data:`OWNER_LABEL`; labels are engine metadata, invisible from inside a container (a test checks).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TypeVar

import docker
import docker.errors
import requests.exceptions
from docker.models.containers import Container
from docker.types import LogConfig, Mount

from ..contracts import Digest
from ..errors import SandboxError
from ..store import Store, tree_from_tar
from .base import RunOutcome, RunRequest, RunStatus, SandboxBackend
from .layout import USER_GID, USER_UID, WORKSPACE
from .spec import ContainerSpec, NetworkMode
from .tarpipe import chunk_stream, tree_chunks

__all__ = ["NO_HOST_ADDRESS", "OWNER_LABEL", "DockerBackend", "create_container", "docker_client", "engine_call"]

OWNER_LABEL = "sandbox.owner"
# A model-only network gets no host address on its bridge: on Docker 20.10 a plain internal network still does,
# and a container on it reached every host service listening on all addresses (measured, tests/agent).
NO_HOST_ADDRESS = {"com.docker.network.bridge.inhibit_ipv4": "true"}
OWNER = "runner"
_ENGINE_TIMEOUT = 600
T = TypeVar("T")


def docker_client() -> docker.DockerClient:
    """A client for the local engine; the error says how to start one."""
    try:
        client = docker.from_env(timeout=_ENGINE_TIMEOUT)
        client.ping()
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise SandboxError(f"no Docker engine answers ({exc}); run `scripts/ensure-docker.sh` to start one") from exc
    return client


def engine_call(call: Callable[[], T], what: str) -> T:
    """Run one engine call; an engine refusal becomes a :class:`SandboxError` saying what was being done."""
    try:
        return call()
    except docker.errors.APIError as exc:
        raise SandboxError(f"the engine failed {what}: {exc.explanation}") from exc


def create_container(client: docker.DockerClient, spec: ContainerSpec, network: str) -> Container:
    """Create (not start) the container ``spec`` describes: limits, no capabilities, the owner label."""
    mounts = [Mount(m.target, m.source, type="bind", read_only=m.read_only) for m in spec.effective_mounts()]
    limits = spec.limits
    try:
        return client.containers.create(
            image=spec.image_id,
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
            labels={OWNER_LABEL: OWNER},
            log_config=LogConfig(type=LogConfig.types.JSON, config={"max-size": "16m", "max-file": "1"}),
        )
    except docker.errors.ImageNotFound as exc:
        raise SandboxError(
            f"image {spec.image_id} is not in the local engine; build it with `stele-bench image build NAME`"
        ) from exc
    except docker.errors.APIError as exc:
        raise SandboxError(f"the engine refused to create a container from {spec.image_id}: {exc.explanation}") from exc


class DockerBackend(SandboxBackend):
    """Runs each request in a fresh container on the local engine; see :class:`SandboxBackend`."""

    def __init__(self, store: Store, client: docker.DockerClient | None = None) -> None:
        self.store = store
        self.client = client or docker_client()

    def run(self, request: RunRequest) -> RunOutcome:
        with self._network(request) as network:
            container = create_container(self.client, request.spec, network)
            try:
                return self._run_in(container, request)
            finally:
                self._remove(container)

    def sweep(self) -> int:
        removed = 0
        owned = {"label": f"{OWNER_LABEL}={OWNER}"}
        for container in self.client.containers.list(all=True, filters=owned):
            self._remove(container)
            removed += 1
        for network in self.client.networks.list(filters=owned):
            network.remove()
            removed += 1
        return removed

    # -- one container -------------------------------------------------------------------------

    def _run_in(self, container: Container, request: RunRequest) -> RunOutcome:
        if request.workspace is not None:
            chunks = tree_chunks(
                self.store, request.workspace, prefix=WORKSPACE.lstrip("/"), uid=USER_UID, gid=USER_GID
            )
            engine_call(lambda: container.put_archive("/", chunks), "copying the workspace in")
        started = time.monotonic()
        engine_call(container.start, "starting the container")
        status, exit_code = self._wait(container, request.timeout_seconds)
        seconds = time.monotonic() - started
        output, printed = self._output(container, request.output_limit)
        tree = self._read_back(container) if request.read_back else None
        return RunOutcome(
            status=status, exit_code=exit_code, output=output, output_bytes=printed, seconds=seconds, tree=tree
        )

    def _wait(self, container: Container, timeout: float) -> tuple[RunStatus, int | None]:
        try:
            result = container.wait(timeout=timeout)
            return RunStatus.EXITED, int(result["StatusCode"])
        except requests.exceptions.RequestException:
            engine_call(lambda: container.kill(), "killing the container past its deadline")
            container.wait(timeout=_ENGINE_TIMEOUT)
            return RunStatus.TIMED_OUT, None

    def _output(self, container: Container, limit: int) -> tuple[str, int]:
        kept, printed = bytearray(), 0
        for chunk in container.logs(stdout=True, stderr=True, stream=True):
            printed += len(chunk)
            kept += chunk[: max(0, limit - len(kept))]
        return kept.decode("utf-8", "replace"), printed

    def _read_back(self, container: Container) -> Digest:
        chunks, _ = engine_call(lambda: container.get_archive(WORKSPACE), "copying the workspace out")
        return tree_from_tar(self.store, chunk_stream(chunks), strip=WORKSPACE.rsplit("/", 1)[-1])

    def _remove(self, container: Container) -> None:
        try:
            container.remove(force=True, v=True)
        except docker.errors.NotFound:
            pass  # already gone: removal is what we wanted
        except docker.errors.APIError as exc:
            raise SandboxError(f"cannot remove container {container.short_id}: {exc.explanation}") from exc

    # -- networks ------------------------------------------------------------------------------

    @contextmanager
    def _network(self, request: RunRequest) -> Iterator[str]:
        """The engine network for the spec's mode; a model-only network is made here and removed after."""
        mode = request.spec.network.mode
        if mode is NetworkMode.NONE:
            yield "none"
            return
        if mode is NetworkMode.PUBLIC:
            yield "bridge"
            return
        if request.gateway is None or request.spec.network.gateway_alias is None:
            raise SandboxError("a model-only network needs a gateway container and the alias it answers to")
        network = self.client.networks.create(
            f"net-{secrets.token_hex(6)}",
            driver="bridge",
            internal=True,
            options=NO_HOST_ADDRESS,
            labels={OWNER_LABEL: OWNER},
        )
        try:
            engine_call(
                lambda: network.connect(request.gateway, aliases=[request.spec.network.gateway_alias]),
                f"attaching gateway {request.gateway} to the model-only network",
            )
            yield str(network.name)
        finally:
            with suppress(docker.errors.APIError):  # the gateway may be gone already; removing the network matters
                network.disconnect(request.gateway, force=True)
            network.remove()
