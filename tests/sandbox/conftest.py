"""Fixtures for the sandbox tests: a real engine, locally built images, and a check that nothing is left behind.

There is no skip when the engine is absent: these tests are the proof that the runner works on a real engine,
so a missing engine fails them (start one with scripts/ensure-docker.sh).
"""

from __future__ import annotations

from collections.abc import Iterator

import docker
import pytest

from bench.sandbox import OWNER_LABEL, DockerBackend, docker_client
from bench.sandbox.images import ImageName, build_image
from bench.store import Store
from bench.suite.challenge import Environment, NetworkMode


@pytest.fixture(scope="session")
def engine() -> docker.DockerClient:
    return docker_client()


@pytest.fixture(scope="session", autouse=True)
def nothing_left_behind(engine: docker.DockerClient) -> Iterator[None]:
    """Fail the session if any container or network the runner labels outlives the tests."""
    yield
    containers = engine.containers.list(all=True, filters={"label": OWNER_LABEL})
    networks = engine.networks.list(filters={"label": OWNER_LABEL})
    left = [f"container {c.short_id}" for c in containers] + [f"network {n.name}" for n in networks]
    for container in containers:
        container.remove(force=True)
    for network in networks:
        network.remove()
    assert not left, f"the runner left these behind: {left}"


@pytest.fixture(scope="session")
def tiny_image(engine: docker.DockerClient) -> str:
    return build_image(ImageName.TINY, engine).record.image_id


@pytest.fixture(scope="session")
def base_image(engine: docker.DockerClient) -> str:
    return build_image(ImageName.BASE, engine).record.image_id


@pytest.fixture
def backend(store: Store, engine: docker.DockerClient) -> DockerBackend:
    return DockerBackend(store, engine)


@pytest.fixture
def environment() -> Environment:
    return Environment(network_mode=NetworkMode.NONE, cpus=1.0, memory_mb=256)
