"""Finding locally built images by their recipe label; a missing image is an error that says how to build it.

Every image this package builds carries two labels: the recipe name and the digest of the recipe's inputs. An
image whose labels match is reused, so builds are idempotent; a changed input (a new busybox, another mirror, a
new CLI version) gives a new inputs digest and so a new image. Labels live in the engine's metadata, never in the
container's filesystem or environment, so the agent cannot read them.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..errors import SandboxError
from ..sandbox.backends import ImageInfo, SandboxBackend
from .engine_memo import listed, process_backend

__all__ = [
    "INPUTS_LABEL",
    "RECIPE_LABEL",
    "ImageName",
    "ImageRecord",
    "find_image",
    "list_images",
    "newest_image_id",
    "require_image",
    "using",
]

RECIPE_LABEL = "sandbox.image.recipe"
INPUTS_LABEL = "sandbox.image.inputs"


class ImageName(enum.StrEnum):
    """The images this package knows how to build, smallest first."""

    TINY = "tiny"  # busybox-static, for fast tests
    BASE = "base"  # Debian minbase with python3 and git
    AGENT = "agent"  # base plus the coding-agent CLI
    LAYER = "layer"  # agent plus one memory system's declared packages (built from its declaration)


@dataclass(frozen=True)
class ImageRecord:
    name: ImageName
    image_id: str
    inputs: str
    size: int
    created: str


@contextmanager
def using(backend: SandboxBackend | None) -> Iterator[SandboxBackend]:
    """``backend``, or this process's default one (:func:`~.engine_memo.process_backend`: one connection)."""
    yield backend if backend is not None else process_backend()


def _record(image: ImageInfo) -> ImageRecord | None:
    labels = image.labels
    if labels.get(RECIPE_LABEL) not in ImageName._value2member_map_ or INPUTS_LABEL not in labels:
        return None
    return ImageRecord(
        name=ImageName(labels[RECIPE_LABEL]),
        image_id=image.image_id,
        inputs=labels[INPUTS_LABEL],
        size=image.size,
        created=image.created,
    )


def list_images(backend: SandboxBackend | None = None) -> list[ImageRecord]:
    """Every image built by a recipe here, newest first."""
    with using(backend) as images:
        records = [record for image in listed(images, RECIPE_LABEL) if (record := _record(image)) is not None]
    return sorted(records, key=lambda record: (record.name.value, record.created), reverse=True)


def find_image(name: ImageName, inputs: str | None = None, backend: SandboxBackend | None = None) -> ImageRecord | None:
    """The newest image of recipe ``name`` (with exactly ``inputs`` when given), or None."""
    for record in list_images(backend):
        if record.name is name and (inputs is None or record.inputs == inputs):
            return record
    return None


def require_image(image_id: str, backend: SandboxBackend | None = None) -> str:
    """Check that the pinned ``image_id`` exists locally; the error names the build command."""
    with using(backend) as images:
        return images.image(image_id).image_id


def newest_image_id(name: ImageName, backend: SandboxBackend | None = None) -> str:
    """The ID of the newest ``name`` image, or an error that says how to build it."""
    record = find_image(name, backend=backend)
    if record is None:
        raise SandboxError(f"no {name.value} image is built; run `stele-bench image build {name.value}`")
    return record.image_id
