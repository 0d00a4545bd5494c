"""Fixtures for the agent tests: a real engine, the agent image (built once, cached by its inputs digest), the
self-made challenge of :mod:`scenario`, and a check that the tests leave no container or network behind.

Nothing is skipped: these tests prove the real CLI runs in the real containers against the gateway, so a missing
engine or image fails them (start an engine with scripts/ensure-docker.sh).
"""

from __future__ import annotations

from collections.abc import Iterator

import docker
import pytest
from agent_scenario import Inputs, policy_bytes, write_challenge_dir, write_fixture
from forward_scenario import ENDLESS, Provider, serve_provider

from bench.images import ImageName, build_image
from bench.sandbox.backends import OWNER_LABEL, Lease
from bench.sandbox.backends.docker import DockerBackend, docker_client
from bench.store import Store, tree_from_directory


def _owned(engine: docker.DockerClient) -> set[str]:
    labelled = {"label": f"{OWNER_LABEL}={Lease.current().owner}"}  # this test process's: others' are not ours
    containers = {f"container {c.id}" for c in engine.containers.list(all=True, filters=labelled)}
    return containers | {f"network {n.id}" for n in engine.networks.list(filters=labelled)}


@pytest.fixture(scope="session")
def engine() -> Iterator[docker.DockerClient]:
    client = docker_client()
    yield client
    client.close()


@pytest.fixture(scope="session", autouse=True)
def nothing_left_behind(engine: docker.DockerClient) -> Iterator[None]:
    """Fail the session if a container or network made during it outlives it (others' are left alone)."""
    before = _owned(engine)
    yield
    left = _owned(engine) - before
    assert not left, f"the agent runner left these behind: {sorted(left)}"


@pytest.fixture(scope="session")
def agent_image(engine: docker.DockerClient) -> str:
    return build_image(ImageName.AGENT, DockerBackend(client=engine)).record.image_id


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Inputs:
    root = tmp_path_factory.mktemp("runner")
    store = Store(root / "store")
    write_fixture(root / "fixture")
    write_challenge_dir(root / "task")
    fixture = tree_from_directory(store, root / "fixture")
    return Inputs(store, root / "task", root / "fixture", fixture, store.put_bytes(policy_bytes()))


@pytest.fixture
def backend(inputs: Inputs, engine: docker.DockerClient) -> DockerBackend:
    """The sandbox backend on the shared engine connection, over the scenario's store."""
    return DockerBackend(inputs.store, engine)


@pytest.fixture
def provider(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Provider]:
    """The paid provider on loopback (forward_scenario.py); ``indirect`` param ``endless`` for a never-ending model."""
    with serve_provider(getattr(request, "param", None) == ENDLESS, monkeypatch.setenv) as served:
        yield served
