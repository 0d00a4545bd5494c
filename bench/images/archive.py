"""Images travel through the store: an image's archive is an object, found by its image ID, loaded on any node.

Building an image on one machine and pinning its ID in a plan is not enough on a cluster: another node's engine
may not have it, and a node that built its own would run another ID, splitting the comparability key by machine.
So the image that was built is archived (``docker save``: its layers and config, so a load keeps its ID) into the
store, under the ref ``images/<hex of the ID>`` pointing at an :class:`ImageArchive` document; a node whose engine
lacks a pinned image loads it from there (:class:`StoreImages`, the backend's image source) before its first
container starts.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Literal

from ..contracts import BlobDigest, Document, ImageId, Ref
from ..sandbox.backends import ImageSource, SandboxBackend
from ..store import Store
from .engine_memo import images_changed

__all__ = ["PUBLIC_CONTRACTS", "ImageArchive", "StoreImages", "archive_image", "image_ref"]


class ImageArchive(Document):
    """An image as the store keeps it: the archive whose load yields ``image_id``."""

    kind: Literal["image-archive"] = "image-archive"
    schema_version: Literal[1] = 1
    image_id: ImageId
    archive: BlobDigest  # `docker save` of the image by ID


def image_ref(image_id: str) -> str:
    return f"images/{image_id.removeprefix('sha256:')}"


def archive_image(store: Store, image_id: str, backend: SandboxBackend) -> Ref[ImageArchive]:
    """Keep the archive of ``image_id`` in the store (once: an image already archived is not saved again)."""
    name = image_ref(image_id)
    found = store.get_ref(name)
    if found is not None:
        return Ref[ImageArchive](found)
    with tempfile.TemporaryDirectory(prefix="image-archive-") as work:
        archive = Path(work) / "image.tar"
        backend.save_image(image_id, archive)
        blob = store.put_bytes(archive.read_bytes())
    made = store.put_document(ImageArchive(image_id=ImageId(image_id), archive=blob))
    if not store.compare_and_set_ref(name, None, made):  # another node archived it first: theirs stands
        return Ref[ImageArchive](store.get_ref(name) or made)
    return made


class StoreImages(ImageSource):
    """Image archives in ``store``: what a backend loads when its engine lacks a pinned image."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def fetch(self, image_id: str, directory: Path) -> Path | None:
        found = self.store.get_ref(image_ref(image_id))
        if found is None:
            return None
        document = self.store.get_document(found, ImageArchive)
        target = directory / "image.tar"
        target.write_bytes(self.store.get_bytes(document.archive))  # verified: its bytes hash to its name
        images_changed()  # the backend loads it next: this process's remembered listings are stale
        return target


PUBLIC_CONTRACTS = (ImageArchive,)
