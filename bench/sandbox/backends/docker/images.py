"""Images on the Docker engine: listed by label, looked up by ID, imported from a rootfs tar, built from a context.

No registry is involved: ``import`` takes a rootfs tarball (a file, streamed, or bytes) and ``build`` runs the
legacy builder on a local context whose ``FROM`` names a local image ID.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

import docker.errors  # type: ignore[import-untyped]

from ....errors import SandboxError
from ...layout import WORKSPACE
from ...tarpipe import CHUNK, chunk_stream
from ..base import ImageInfo
from .engine import Client, created, engine_errors, remove_container

__all__ = [
    "build_layer",
    "export_filesystem",
    "get_image",
    "has_image",
    "import_rootfs",
    "labelled_images",
    "load_archive",
    "save_archive",
]


def _info(image: Any) -> ImageInfo:
    return ImageInfo(
        image_id=str(image.id),
        labels=dict(image.labels or {}),
        size=int(image.attrs.get("Size", 0)),
        created=str(image.attrs.get("Created", "")),
    )


def labelled_images(client: Client, label: str) -> list[ImageInfo]:
    with engine_errors(f"listing images labelled {label}"):
        return [_info(image) for image in client.images.list(filters={"label": label})]


def get_image(client: Client, image_id: str) -> ImageInfo:
    with engine_errors(f"looking up image {image_id}"):
        try:
            image = client.images.get(image_id)
        except docker.errors.ImageNotFound as exc:
            raise SandboxError(
                f"image {image_id} is not in the local engine; build it with `stele-bench image build NAME` "
                "(NAME: tiny, base or agent) and pin the ID it prints"
            ) from exc
    return _info(image)


def import_rootfs(
    client: Client, rootfs: bytes | Path, *, tag: str, labels: Mapping[str, str], env: Mapping[str, str]
) -> str:
    """``docker import`` of ``rootfs`` with the labels, the environment and the workspace as working directory."""
    repository, _, version = tag.partition(":")
    changes = [f"LABEL {key}={value}" for key, value in labels.items()]
    changes += [f"WORKDIR {WORKSPACE}", *(f"ENV {key}={value}" for key, value in sorted(env.items()))]
    options = {"repository": repository, "tag": version or "latest", "changes": changes}
    with engine_errors(f"importing the rootfs of {tag}"):
        if isinstance(rootfs, Path):
            response = client.api.import_image_from_file(str(rootfs), **options)
        else:
            response = client.api.import_image_from_data(rootfs, **options)
    for line in str(response).splitlines():
        status = json.loads(line).get("status", "") if line.strip() else ""
        if status.startswith("sha256:"):
            return str(status)
    raise SandboxError(f"the engine did not report an image ID importing {tag}: {str(response)[-500:]}")


def build_layer(client: Client, context: Path, *, tag: str, labels: Mapping[str, str]) -> str:
    """``docker build`` of the context tar file ``context``; returns the new image's ID."""
    with context.open("rb") as stream, engine_errors(f"building {tag}"):
        image, _ = client.images.build(fileobj=stream, custom_context=True, labels=dict(labels), tag=tag, rm=True)
    return str(image.id)


def has_image(client: Client, image_id: str) -> bool:
    with engine_errors(f"looking up image {image_id}"):
        try:
            client.images.get(image_id)
        except docker.errors.ImageNotFound:
            return False
    return True


def save_archive(client: Client, image_id: str, target: Path) -> None:
    """``docker save`` of one image by ID (no tags: the archive names the image only by its config digest)."""
    with engine_errors(f"saving image {image_id}"), target.open("wb") as output:
        for chunk in client.images.get(image_id).save(named=False):
            output.write(chunk)


def load_archive(client: Client, archive: Path) -> list[str]:
    """``docker load`` of an archive, streamed from the file; the IDs of the images it held."""
    with archive.open("rb") as stream, engine_errors(f"loading the image archive {archive.name}"):
        return [str(image.id) for image in client.images.load(stream)]


@contextmanager
def export_filesystem(client: Client, image_id: str, labels: Mapping[str, str]) -> Iterator[BinaryIO]:
    """``docker export`` of a container created from ``image_id`` and never started, streamed; the container
    carries the lease ``labels`` (a sweep removes it should this process die) and is removed on every way out."""

    def make() -> Any:
        with engine_errors(f"creating a container of {image_id} to export its filesystem"):
            return client.containers.create(
                image=image_id, command=["true"], labels=dict(labels), network_disabled=True
            )

    with created(make, remove_container) as container, engine_errors(f"exporting the filesystem of {image_id}"):
        yield chunk_stream(container.export(chunk_size=CHUNK))
