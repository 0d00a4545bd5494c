"""Building the images: idempotent (an image whose recipe label and inputs digest match is reused) and timed.

tiny and base are rootfs tarballs imported through the backend (``docker import`` on Docker); agent is a layer the
backend builds on the base image's ID (``docker build``), one per harness, each labelled with its harness's recipe
label (:func:`build_agent`; ``agent`` is the default harness's), and a memory system's image a layer on the suite's
harness's agent image (:func:`build_layer`, from the packages its declaration names). Without a backend given, the
default one is used. The rootfs and CLI downloads are cached under :func:`cache_dir`, so even a rebuild after the
engine lost its images fetches nothing. Every image returned has scanned clean of the harness's name (:mod:`.scan`).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from pathlib import Path

from ..contracts import Digest, Sha256
from ..errors import SandboxError
from ..harness import DEFAULT_HARNESS, Harness, harness_named
from ..machine_cache import cache_root
from ..sandbox.backends import SandboxBackend
from ..sandbox.layout import BASE_ENV
from ..store import Store
from ..suite.memory_system import ImageLayer
from .archive import archive_image
from .debian import DebianRecipe, base_rootfs, configured_mirror, host_codename
from .engine_memo import images_changed, listed, remembered
from .harness_image import HarnessImage, build_harness_image
from .labels import INPUTS_LABEL, RECIPE_LABEL, ImageName, ImageRecord, list_images, using
from .layer import fetch_layer, layer_context, layer_inputs
from .scan import require_neutral_image
from .tiny import tiny_rootfs

__all__ = ["BuildResult", "build_agent", "build_image", "build_layer", "cache_dir"]


@dataclass(frozen=True)
class BuildResult:
    record: ImageRecord
    built: bool  # False: an image with the same inputs already existed
    seconds: float
    archive: Digest | None = None  # the ImageArchive document in the store, when asked to archive it


def cache_dir() -> Path:
    """Where rootfs tarballs and CLI binaries are kept between builds: ``images/`` under the machine's cache."""
    return cache_root() / "images"


def _labels(name: ImageName, inputs: str) -> dict[str, str]:
    return {RECIPE_LABEL: name.value, INPUTS_LABEL: inputs}


class _Listing:
    """The engine's recipe images as this process last listed them (:mod:`.engine_memo`: listed again only after
    this process built, imported or loaded an image)."""

    def __init__(self, backend: SandboxBackend) -> None:
        self.backend = backend

    def records(self) -> list[ImageRecord]:
        return list_images(self.backend)

    def find(self, name: ImageName, inputs: str) -> ImageRecord | None:
        return next((r for r in self.records() if r.name is name and r.inputs == inputs), None)

    def ids(self, name: ImageName) -> set[str]:
        return {record.image_id for record in self.records() if record.name is name}


def _once(images: SandboxBackend, question: Hashable, started: float, build: Callable[[], BuildResult]) -> BuildResult:
    """``build()``'s result, computed once per process until it changes an image (:func:`.engine_memo.remembered`):
    the images step of a run and its plan ask for the same images. Asked again, the image was not built now."""
    fresh: list[BuildResult] = []

    def first() -> BuildResult:
        fresh.append(build())
        return fresh[0]

    result = remembered(images, (question, str(cache_dir())), first)
    return result if fresh else replace(result, built=False, seconds=time.monotonic() - started)


def _import(listing: _Listing, name: ImageName, inputs: str, rootfs: bytes | Path) -> None:
    tag = f"sandbox-{name.value}:{inputs[:12]}"
    try:
        listing.backend.import_image(rootfs, tag=tag, labels=_labels(name, inputs), env=BASE_ENV)
    finally:
        images_changed()


def _build_agent(listing: _Listing, cache: Path, harness: Harness) -> HarnessImage:
    """``harness``'s agent image, labelled with its own recipe label, built unless built."""
    base = _build(ImageName.BASE, listing).record  # the agent layer needs its base: built when missing
    return build_harness_image(harness.image_recipe(), harness.image_label, base.image_id, cache, listing.backend)


def build_agent(
    harness: str = DEFAULT_HARNESS, backend: SandboxBackend | None = None, store: Store | None = None
) -> BuildResult:
    """The agent image of the harness named ``harness`` (each harness's own, by its recipe label), built unless an
    image with the same inputs exists; with ``store``, archived there as :func:`build_image` does."""
    with using(backend) as images:
        started = time.monotonic()
        made = _once(images, ("agent", harness), started, lambda: _agent_result(_Listing(images), harness, started))
        return _archived(made, store, images, started)


def _agent_result(listing: _Listing, harness: str, started: float) -> BuildResult:
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    before = {image.image_id for image in listed(listing.backend, RECIPE_LABEL)}
    made = _build_agent(listing, cache, harness_named(harness))
    info = listing.backend.image(made.image_id)
    record = ImageRecord(ImageName.AGENT, made.image_id, made.inputs, info.size, info.created)
    return BuildResult(record=record, built=made.image_id not in before, seconds=time.monotonic() - started)


def build_image(name: ImageName, backend: SandboxBackend | None = None, store: Store | None = None) -> BuildResult:
    """Build ``name`` unless an image with the same inputs exists; returns its record and the time taken. With
    ``store``, the image's archive is kept there too, so every node of a cluster loads this very image."""
    started = time.monotonic()
    with using(backend) as images:
        return _archived(_build(name, _Listing(images)), store, images, started)


def _archived(result: BuildResult, store: Store | None, images: SandboxBackend, started: float) -> BuildResult:
    """``result``, its image archived into ``store`` when one is given."""
    if store is None:
        return result
    archived = archive_image(store, result.record.image_id, images)
    return replace(result, archive=archived, seconds=time.monotonic() - started)


def _build(name: ImageName, listing: _Listing) -> BuildResult:
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    before = listing.ids(name)
    if name is ImageName.TINY:
        rootfs = tiny_rootfs()
        inputs = str(Sha256.of(rootfs))
        if listing.find(name, inputs) is None:
            _import(listing, name, inputs, rootfs)
    elif name is ImageName.BASE:
        suite = host_codename()
        recipe = DebianRecipe(mirror=configured_mirror(suite), suite=suite)
        inputs = recipe.inputs
        if listing.find(name, inputs) is None:
            _import(listing, name, inputs, base_rootfs(recipe, cache))
    elif name is ImageName.AGENT:
        inputs = _build_agent(listing, cache, harness_named(DEFAULT_HARNESS)).inputs
    else:
        raise SandboxError(
            "a layer image is built from a memory system's declared packages (build_layer), not by name; "
            "the suite plan builds each system's layer"
        )
    return _found(name, inputs, listing, before, started)


def _found(name: ImageName, inputs: str, listing: _Listing, before: set[str], started: float) -> BuildResult:
    record = listing.find(name, inputs)
    if record is None:
        raise SandboxError(f"the {name.value} image was built but no image carries inputs {inputs}")
    require_neutral_image(record.image_id, listing.backend, cache_dir())  # every image returned has scanned clean
    return BuildResult(record=record, built=record.image_id not in before, seconds=time.monotonic() - started)


def build_layer(
    layer: ImageLayer,
    backend: SandboxBackend | None = None,
    store: Store | None = None,
    harness: str = DEFAULT_HARNESS,
) -> BuildResult:
    """The agent image of the harness named ``harness`` plus ``layer``'s packages, built unless an image with the
    same inputs exists; with ``store``, archived there as :func:`build_image` does."""
    with using(backend) as images:
        started = time.monotonic()
        question = ("layer", harness, layer.model_dump_json())
        made = _once(images, question, started, lambda: _layer_result(_Listing(images), layer, harness, started))
        return _archived(made, store, images, started)


def _layer_result(listing: _Listing, layer: ImageLayer, harness: str, started: float) -> BuildResult:
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    before = listing.ids(ImageName.LAYER)
    agent = _build_agent(listing, cache, harness_named(harness)).image_id
    fetched = fetch_layer(cache, layer)
    inputs = layer_inputs(agent, layer, fetched)
    if listing.find(ImageName.LAYER, inputs) is None:
        with tempfile.TemporaryDirectory(dir=cache, prefix="context-") as work:
            context = layer_context(agent, layer, fetched, Path(work) / "context.tar")
            labels = _labels(ImageName.LAYER, inputs)
            try:
                listing.backend.build_image(context, tag=f"sandbox-layer:{inputs[:12]}", labels=labels)
            finally:
                images_changed()
    return _found(ImageName.LAYER, inputs, listing, before, started)
