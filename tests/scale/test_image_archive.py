"""Images travel through the store: a node whose engine lacks a pinned image loads its archive from the store and
runs the very same image ID. The image is a throwaway one made here (other runs share this engine's images)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from s3server import S3Server

from bench.errors import SandboxError
from bench.images import StoreImages, archive_image
from bench.images.archive import ImageArchive, image_ref
from bench.images.tiny import tiny_rootfs
from bench.sandbox import RunRequest, container_spec
from bench.sandbox.backends.docker import DockerBackend, docker_client
from bench.sandbox.layout import BASE_ENV
from bench.store import Store
from bench.suite.challenge import Environment, NetworkMode

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

ENVIRONMENT = Environment(network_mode=NetworkMode.NONE, cpus=1.0, memory_mb=128)


@pytest.fixture
def throwaway_image() -> Iterator[tuple[docker.DockerClient, str]]:
    """An image only this test knows (its unique label gives it its own ID), removed at the end."""
    client = docker_client()
    unique = uuid.uuid4().hex[:12]
    with DockerBackend(client=client) as images:
        image_id = images.import_image(
            tiny_rootfs(), tag=f"stele-archive-test:{unique}", labels={"stele.test.unique": unique}, env=BASE_ENV
        )
    yield client, image_id
    with contextlib.suppress(docker.errors.ImageNotFound):
        client.images.remove(image_id, force=True)
    client.close()


def _echo(image_id: str) -> RunRequest:
    spec = container_spec(image_id, ENVIRONMENT, ("sh", "-c", "echo loaded"))
    return RunRequest(spec=spec, workspace=None, timeout_seconds=120, read_back=False)


def test_a_node_loads_a_pinned_image_from_the_store_with_its_id(
    s3_server: S3Server, tmp_path: Path, throwaway_image: tuple[docker.DockerClient, str]
) -> None:
    client, image_id = throwaway_image
    location = s3_server.location("images")
    builder = Store(location)
    with DockerBackend(client=client) as images:
        archived = archive_image(builder, image_id, images)
        assert archive_image(builder, image_id, images) == archived, "an image is archived once"
    document = builder.get_document(archived, ImageArchive)
    assert document.image_id == image_id and builder.get_ref(image_ref(image_id)) == archived

    client.images.remove(image_id, force=True)  # the other node's engine has never seen it
    node = Store(location)
    with DockerBackend(node, client=client, images=StoreImages(node)) as backend:
        outcome = backend.run(_echo(image_id))
    assert outcome.exit_code == 0 and outcome.output.strip() == "loaded"
    assert client.images.get(image_id).id == image_id, "the loaded image is the very image that was pinned"


def test_an_image_neither_in_the_engine_nor_in_the_store_is_refused_by_name(s3_server: S3Server) -> None:
    store = Store(s3_server.location("no-images"))
    missing = "sha256:" + "0" * 64
    with DockerBackend(store, images=StoreImages(store)) as backend, pytest.raises(SandboxError) as refused:
        backend.run(_echo(missing))
    assert missing in str(refused.value) and "no archive of it is stored" in str(refused.value)
    assert "--archive" in str(refused.value)
