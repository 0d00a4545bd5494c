"""The sandbox backend on a local Docker engine, through the ``docker`` SDK: the only package that imports it.

Layout: ``engine.py`` the client, the one error translation, containers and the sweep; ``session.py`` exec
sessions; ``network.py`` the model-only arrangement; ``images.py`` images.
"""

from __future__ import annotations

import functools
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO, ClassVar

from ....contracts import Digest
from ....errors import SandboxError
from ....store import Store
from ...spec import ContainerSpec, NetworkMode
from ..base import (
    Capability,
    ImageInfo,
    ImageSource,
    ModelNetwork,
    RunOutcome,
    RunRequest,
    SandboxBackend,
    Session,
    SweepReport,
)
from ..lease import Lease
from . import engine, images
from .engine import NO_HOST_ADDRESS, docker_client
from .network import DockerModelNetwork, docker_model_network
from .session import DockerSession, docker_session

__all__ = ["NO_HOST_ADDRESS", "DockerBackend", "DockerModelNetwork", "DockerSession", "docker_client"]


class DockerBackend(SandboxBackend):
    """Containers on the local engine; see :class:`~bench.sandbox.backends.base.SandboxBackend`.

    ``client`` is an engine connection to share (the caller closes it); without one the backend opens its own
    and :meth:`close` closes it. With ``images``, an image the engine lacks is loaded from there before a container
    of it starts (on a cluster: the archive in the store), so every node runs the same image ID.
    """

    capabilities: ClassVar[frozenset[Capability]] = frozenset(Capability)

    def __init__(
        self,
        store: Store | None = None,
        client: Any = None,
        lease: Lease | None = None,
        images: ImageSource | None = None,
    ) -> None:
        super().__init__(store, lease)
        self._owns_client = client is None
        self.client = client if client is not None else docker_client()
        self._source = images
        self._present: set[str] = set()
        self._loading = threading.Lock()

    def close(self) -> None:
        if self._owns_client:
            self.client.close()

    # -- images ------------------------------------------------------------------------------------

    def images(self, label: str) -> list[ImageInfo]:
        return images.labelled_images(self.client, label)

    def image(self, image_id: str) -> ImageInfo:
        return images.get_image(self.client, image_id)

    def import_image(self, rootfs: bytes | Path, *, tag: str, labels: Mapping[str, str], env: Mapping[str, str]) -> str:
        return images.import_rootfs(self.client, rootfs, tag=tag, labels=labels, env=env)

    def build_image(self, context: Path, *, tag: str, labels: Mapping[str, str]) -> str:
        return images.build_layer(self.client, context, tag=tag, labels=labels)

    def save_image(self, image_id: str, target: Path) -> None:
        images.save_archive(self.client, image_id, target)

    @contextmanager
    def export_image(self, image_id: str) -> Iterator[BinaryIO]:
        self._ensure_image(image_id)
        with images.export_filesystem(self.client, image_id, self.lease.labels()) as stream:
            yield stream

    def load_image(self, archive: Path) -> list[str]:
        return images.load_archive(self.client, archive)

    def _ensure_image(self, image_id: str) -> None:
        """Load ``image_id`` from the image source when the engine lacks it (once per backend and image)."""
        if self._source is None or image_id in self._present:
            return
        with self._loading:
            if image_id not in self._present and not images.has_image(self.client, image_id):
                with tempfile.TemporaryDirectory(prefix="image-") as work:
                    archive = self._source.fetch(image_id, Path(work))
                    loaded = self.load_image(archive) if archive is not None else []
                if image_id not in loaded:
                    raise SandboxError(
                        f"image {image_id} is not in the local engine and "
                        + ("its archive held other images" if archive else "no archive of it is stored"),
                        hint="build it with `stele-bench --store STORE image build NAME --archive` where it was built",
                    )
            self._present.add(image_id)

    # -- containers --------------------------------------------------------------------------------

    def _run(self, request: RunRequest) -> RunOutcome:
        self._ensure_image(request.spec.image_id)
        network = self._network(request.spec, None)
        make = functools.partial(engine.create_container, self.client, request.spec, network, self.lease.labels())
        with engine.created(make, engine.remove_container) as container:
            if request.workspace is not None:
                engine.put_workspace(container, self.store, request.workspace)
            started = time.monotonic()
            with engine.engine_errors("starting the container"):
                container.start()
            timed_out, exit_code = engine.wait(container, request.timeout_seconds)
            seconds = time.monotonic() - started
            output, printed = engine.read_output(container, request.output_limit)
            tree = engine.read_workspace(container, self.store) if request.read_back else None
        return RunOutcome(
            timed_out=timed_out, exit_code=exit_code, output=output, output_bytes=printed, seconds=seconds, tree=tree
        )

    @contextmanager
    def _session(
        self,
        spec: ContainerSpec,
        workspace: Digest,
        home_dirs: tuple[PurePosixPath, ...],
        network: ModelNetwork | None,
    ) -> Iterator[Session]:
        self._ensure_image(spec.image_id)
        name = self._network(spec, network)
        with docker_session(self.client, self.store, spec, name, workspace, home_dirs, self.lease.labels()) as box:
            yield box

    @contextmanager
    def model_network(self, relay_image: str) -> Iterator[ModelNetwork]:
        self._ensure_image(relay_image)
        with docker_model_network(self.client, relay_image, self.lease.labels()) as network:
            yield network

    def sweep(self) -> SweepReport:
        return engine.sweep(self.client, self.lease)

    def _network(self, spec: ContainerSpec, network: ModelNetwork | None) -> str:
        """The engine network a container of ``spec`` joins."""
        mode = spec.network.mode
        if mode is NetworkMode.MODEL_ONLY:
            if not isinstance(network, DockerModelNetwork):
                raise SandboxError(
                    "a model-only container needs a model network: run it in a session on backend.model_network(), "
                    "which gives it the relay to the gateway and nothing else"
                )
            return network.arm_network
        if network is not None:
            raise SandboxError(f"a model network was given for a container whose network mode is {mode.value}")
        return "none" if mode is NetworkMode.NONE else "bridge"
