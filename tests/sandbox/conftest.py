"""Fixtures for the sandbox tests: a real engine, locally built images, and a check that nothing is left behind.

There is no skip when the engine is absent: these tests are the proof that the runner works on a real engine,
so a missing engine fails them (start one with scripts/ensure-docker.sh).
"""

from __future__ import annotations

from collections.abc import Iterator

import docker
import pytest

from bench.images import ImageName, build_image
from bench.sandbox.backends import OWNER_LABEL, Lease
from bench.sandbox.backends.docker import DockerBackend, docker_client
from bench.store import Store
from bench.suite.challenge import Environment, NetworkMode


@pytest.fixture(scope="session")
def engine() -> Iterator[docker.DockerClient]:
    client = docker_client()
    yield client
    client.close()


@pytest.fixture(scope="session", autouse=True)
def nothing_left_behind(engine: docker.DockerClient) -> Iterator[None]:
    """Fail the session if a container or network this test process made (under its lease) outlives the tests.

    Only this process's own: other runs on the same engine (another worker, a demo) are never touched.
    """
    yield
    mine = {"label": f"{OWNER_LABEL}={Lease.current().owner}"}
    containers = engine.containers.list(all=True, filters=mine)
    networks = engine.networks.list(filters=mine)
    left = [f"container {c.short_id}" for c in containers] + [f"network {n.name}" for n in networks]
    for container in containers:
        container.remove(force=True)
    for network in networks:
        network.remove()
    assert not left, f"the runner left these behind: {left}"


@pytest.fixture(scope="session")
def backend_engine(engine: docker.DockerClient) -> Iterator[DockerBackend]:
    """An image-serving backend on the shared engine connection."""
    yield DockerBackend(client=engine)


@pytest.fixture(scope="session")
def tiny_image(backend_engine: DockerBackend) -> str:
    return build_image(ImageName.TINY, backend_engine).record.image_id


@pytest.fixture(scope="session")
def base_image(backend_engine: DockerBackend) -> str:
    return build_image(ImageName.BASE, backend_engine).record.image_id


@pytest.fixture
def backend(store: Store, engine: docker.DockerClient) -> DockerBackend:
    return DockerBackend(store, engine)


@pytest.fixture
def environment() -> Environment:
    return Environment(network_mode=NetworkMode.NONE, cpus=1.0, memory_mb=256)
