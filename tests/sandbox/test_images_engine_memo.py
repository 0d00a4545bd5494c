"""What a process remembers of the engine's images (bench.images.engine_memo, issue 39): one default backend per
process and backend name, and each listing until this process builds, imports or loads an image. Real engine, real
images: a unique label gives each test image its own ID, removed at the end."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from bench.images.archive import StoreImages, archive_image
from bench.images.engine_memo import images_changed, listed, process_backend
from bench.images.tiny import tiny_rootfs
from bench.sandbox.backends import SANDBOX_VARIABLE
from bench.sandbox.backends.docker import DockerBackend
from bench.sandbox.backends.process import ProcessBackend
from bench.sandbox.layout import BASE_ENV
from bench.store import Store


@pytest.fixture
def label() -> str:
    return f"stele.test.memo-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def own_image(engine: docker.DockerClient, backend_engine: DockerBackend, label: str) -> Iterator[str]:
    """An image only this test knows, imported straight through the backend: behind the memo's back, as another
    process would."""
    image_id = backend_engine.import_image(
        tiny_rootfs(), tag=f"stele-memo-test:{label[-12:]}", labels={label: "1"}, env=BASE_ENV
    )
    yield image_id
    with contextlib.suppress(docker.errors.ImageNotFound):  # the test may have removed it itself
        engine.images.remove(image_id, force=True)


def test_a_listing_is_remembered_until_this_process_changes_an_image(
    engine: docker.DockerClient, backend_engine: DockerBackend, label: str
) -> None:
    assert listed(backend_engine, label) == ()
    image_id = backend_engine.import_image(
        tiny_rootfs(), tag=f"stele-memo-test:{label[-12:]}", labels={label: "1"}, env=BASE_ENV
    )
    try:
        assert listed(backend_engine, label) == (), "asked once: the engine is not asked again"
        images_changed()  # what this package's builds and imports say
        assert [image.image_id for image in listed(backend_engine, label)] == [image_id]
    finally:
        engine.images.remove(image_id, force=True)


def test_an_archive_handed_to_a_backend_to_load_makes_the_listing_stale(
    engine: docker.DockerClient, backend_engine: DockerBackend, own_image: str, label: str, tmp_path: Path
) -> None:
    store = Store(tmp_path / "store")
    archive_image(store, own_image, backend_engine)
    engine.images.remove(own_image, force=True)  # the engine lost it, and this process listed after that
    images_changed()
    assert listed(backend_engine, label) == ()
    archive = StoreImages(store).fetch(own_image, tmp_path)
    assert archive is not None
    assert backend_engine.load_image(archive) == [own_image]
    assert [image.image_id for image in listed(backend_engine, label)] == [own_image], "listed again after the load"


def test_one_default_backend_per_process_and_backend_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SANDBOX_VARIABLE, raising=False)
    docker_backend = process_backend()
    assert isinstance(docker_backend, DockerBackend) and process_backend() is docker_backend
    monkeypatch.setenv(SANDBOX_VARIABLE, "process")
    assert isinstance(process_backend(), ProcessBackend), "another backend chosen: that one, made once"
    assert process_backend() is process_backend()
