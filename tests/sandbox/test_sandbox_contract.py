"""The one sandbox contract (tests/sandbox/contract.py), run against both backends.

Docker declares every capability. The process backend runs the host's programs in a temporary root: network modes
none (its own network namespace) and public (the host's), and nothing else: no images (HOST_IMAGE_ID only), no
limits, no model-only network, each refused by name.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import docker
import pytest

from bench.sandbox.backends import Capability, Lease, SandboxBackend
from bench.sandbox.backends.docker import DockerBackend
from bench.sandbox.backends.lease import OWNER_LABEL
from bench.sandbox.backends.process import HOST_IMAGE_ID, ProcessBackend
from bench.store import Store
from tests.sandbox.contract import SandboxContract

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes


@pytest.fixture(scope="session")
def process_boxes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One directory of roots for every process-backend test, so that their sweeps see each other's roots."""
    return tmp_path_factory.mktemp("boxes")


class TestDockerBackend(SandboxContract):
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.IMAGES,
            Capability.LIMITS,
            Capability.NETWORK_NONE,
            Capability.NETWORK_PUBLIC,
            Capability.NETWORK_MODEL_ONLY,
        }
    )

    @pytest.fixture(autouse=True)
    def _engine(self, engine: docker.DockerClient) -> None:
        self.engine = engine

    @pytest.fixture
    def backend(self, store: Store) -> Iterator[SandboxBackend]:
        yield DockerBackend(store, self.engine)

    @pytest.fixture
    def image(self, tiny_image: str) -> str:
        return tiny_image

    def another(self, store: Store, lease: Lease) -> SandboxBackend:
        return DockerBackend(store, self.engine, lease)

    def leftovers(self, owner: str) -> set[str]:
        mine = {"label": f"{OWNER_LABEL}={owner}"}
        containers = {f"container {c.short_id}" for c in self.engine.containers.list(all=True, filters=mine)}
        return containers | {f"network {n.name}" for n in self.engine.networks.list(filters=mine)}

    def spawn_source(self) -> str:
        return "from bench.sandbox.backends.docker import DockerBackend\nbackend = DockerBackend(store)"


class TestProcessBackend(SandboxContract):
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.NETWORK_NONE, Capability.NETWORK_PUBLIC})

    @pytest.fixture(autouse=True)
    def _boxes(self, process_boxes: Path) -> None:
        self.boxes = process_boxes

    @pytest.fixture
    def backend(self, store: Store) -> Iterator[SandboxBackend]:
        yield ProcessBackend(store, self.boxes)

    @pytest.fixture
    def image(self) -> str:
        return HOST_IMAGE_ID

    def another(self, store: Store, lease: Lease) -> SandboxBackend:
        return ProcessBackend(store, self.boxes, lease)

    def leftovers(self, owner: str) -> set[str]:
        owned = self.boxes / owner
        return {f"root {path.name}" for path in owned.iterdir() if path.name != "lease"} if owned.is_dir() else set()

    def spawn_source(self) -> str:
        return (
            "from bench.sandbox.backends.process import ProcessBackend\n"
            f"backend = ProcessBackend(store, Path({str(self.boxes)!r}))"
        )
