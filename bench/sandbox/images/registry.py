"""Finding locally built images by their recipe label; a missing image is an error that says how to build it.

Every image this package builds carries two labels: the recipe name and the digest of the recipe's inputs. An
image whose labels match is reused, so builds are idempotent; a changed input (a new busybox, another mirror, a
new CLI version) gives a new inputs digest and so a new image. Labels live in the engine's metadata, never in the
container's filesystem or environment, so the agent cannot read them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import docker
import docker.errors

from ...errors import SandboxError
from ..docker_backend import docker_client

__all__ = [
    "INPUTS_LABEL",
    "RECIPE_LABEL",
    "ImageName",
    "ImageRecord",
    "find_image",
    "list_images",
    "newest_image_id",
    "require_image",
]

RECIPE_LABEL = "sandbox.image.recipe"
INPUTS_LABEL = "sandbox.image.inputs"


class ImageName(enum.StrEnum):
    """The images this package knows how to build, smallest first."""

    TINY = "tiny"  # busybox-static, for fast tests
    BASE = "base"  # Debian minbase with python3 and git
    AGENT = "agent"  # base plus the coding-agent CLI


@dataclass(frozen=True)
class ImageRecord:
    name: ImageName
    image_id: str
    inputs: str
    size: int
    created: str


def _record(image: docker.models.images.Image) -> ImageRecord:
    labels = image.labels or {}
    return ImageRecord(
        name=ImageName(labels[RECIPE_LABEL]),
        image_id=str(image.id),
        inputs=labels[INPUTS_LABEL],
        size=int(image.attrs.get("Size", 0)),
        created=str(image.attrs.get("Created", "")),
    )


def list_images(client: docker.DockerClient | None = None) -> list[ImageRecord]:
    """Every image built by a recipe here, newest first."""
    client = client or docker_client()
    images = client.images.list(filters={"label": RECIPE_LABEL})
    records = [
        _record(image) for image in images if (image.labels or {}).get(RECIPE_LABEL) in ImageName._value2member_map_
    ]
    return sorted(records, key=lambda record: (record.name.value, record.created), reverse=True)


def find_image(
    name: ImageName, inputs: str | None = None, client: docker.DockerClient | None = None
) -> ImageRecord | None:
    """The newest image of recipe ``name`` (with exactly ``inputs`` when given), or None."""
    for record in list_images(client):
        if record.name is name and (inputs is None or record.inputs == inputs):
            return record
    return None


def require_image(image_id: str, client: docker.DockerClient | None = None) -> str:
    """Check that the pinned ``image_id`` exists locally; the error names the build command."""
    client = client or docker_client()
    try:
        image = client.images.get(image_id)
    except docker.errors.ImageNotFound as exc:
        raise SandboxError(
            f"image {image_id} is not in the local engine; build it with `stele-bench image build NAME` "
            "(NAME: tiny, base or agent) and pin the ID it prints"
        ) from exc
    except docker.errors.APIError as exc:
        raise SandboxError(f"the engine refused to look up image {image_id}: {exc.explanation}") from exc
    return str(image.id)


def newest_image_id(name: ImageName, client: docker.DockerClient | None = None) -> str:
    """The ID of the newest ``name`` image, or an error that says how to build it."""
    record = find_image(name, client=client)
    if record is None:
        raise SandboxError(f"no {name.value} image is built; run `stele-bench image build {name.value}`")
    return record.image_id
